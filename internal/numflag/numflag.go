// Package numflag defines numeric command-line flags that refuse, as they are
// parsed, every value their command cannot use: NaN, infinities, and values
// outside the flag's bounds. Every command declares its numeric flags
// through this package, so the same mistake gets the same message everywhere:
//
//	invalid argument "NaN" for "--speed" flag: want a number from 0.01 to 1000
//
// A value that is never given keeps its default, which is not checked.
package numflag

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Bounds are the values a flag accepts. The zero value accepts any finite
// number; use the constructors.
type Bounds struct {
	min, max       float64
	minOpen        bool // min itself is refused
	hasMin, hasMax bool
	zero           string // what 0 means, for the message ("no limit")
	zeroOr         bool   // 0 is accepted below min
}

// Positive accepts values greater than 0.
func Positive() Bounds { return Bounds{min: 0, hasMin: true, minOpen: true} }

// NonNegative accepts 0 and more. meaning says what 0 stands for ("no
// limit", "forever"); it appears in the error message.
func NonNegative(meaning string) Bounds { return Bounds{min: 0, hasMin: true, zero: meaning} }

// AtLeast accepts min and more.
func AtLeast(min float64) Bounds { return Bounds{min: min, hasMin: true} }

// ZeroOrAtLeast accepts 0, which means meaning ("off"), and min and more.
func ZeroOrAtLeast(min float64, meaning string) Bounds {
	return Bounds{min: min, hasMin: true, zero: meaning, zeroOr: true}
}

// Between accepts min to max, both included.
func Between(min, max float64) Bounds { return Bounds{min: min, max: max, hasMin: true, hasMax: true} }

// Check reports v outside b (NaN and infinities always are).
func (b Bounds) Check(v float64) error {
	if b.zeroOr && v == 0 {
		return nil
	}
	bad := math.IsNaN(v) || math.IsInf(v, 0) ||
		(b.hasMin && (v < b.min || (b.minOpen && v == b.min))) ||
		(b.hasMax && v > b.max)
	if bad {
		return fmt.Errorf("want %s", b)
	}
	return nil
}

// String describes the accepted values.
func (b Bounds) String() string {
	switch {
	case b.zeroOr:
		return fmt.Sprintf("0 (%s) or a number of at least %s", b.zero, num(b.min))
	case b.hasMin && b.hasMax:
		return fmt.Sprintf("a number from %s to %s", num(b.min), num(b.max))
	case b.hasMin && b.minOpen:
		return fmt.Sprintf("a number greater than %s", num(b.min))
	case b.hasMin && b.min == 0 && b.zero != "":
		return fmt.Sprintf("0 (%s) or a positive number", b.zero)
	case b.hasMin:
		return fmt.Sprintf("a number of at least %s", num(b.min))
	}
	return "a finite number"
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// durationString describes duration bounds (the bounds are in nanoseconds).
func (b Bounds) durationString() string {
	d := func(v float64) string { return time.Duration(v).String() }
	switch {
	case b.zeroOr:
		return fmt.Sprintf("0 (%s) or a duration of at least %s", b.zero, d(b.min))
	case b.hasMin && b.hasMax:
		return fmt.Sprintf("a duration from %s to %s", d(b.min), d(b.max))
	case b.hasMin && b.minOpen && b.min == 0:
		return "a positive duration such as 500ms or 2s"
	case b.hasMin && b.minOpen:
		return fmt.Sprintf("a duration longer than %s", d(b.min))
	case b.hasMin && b.min == 0 && b.zero != "":
		return fmt.Sprintf("0 (%s) or a positive duration such as 500ms or 2s", b.zero)
	case b.hasMin:
		return fmt.Sprintf("a duration of at least %s", d(b.min))
	}
	return "a duration such as 500ms or 2s"
}

// Float defines a float64 flag with bounds b.
func Float(fs *pflag.FlagSet, p *float64, name string, value float64, b Bounds, usage string) {
	*p = value
	fs.Var(&floatValue{p: p, b: b}, name, usage)
}

// Int defines an int flag with bounds b.
func Int(fs *pflag.FlagSet, p *int, name string, value int, b Bounds, usage string) {
	*p = value
	fs.Var(&intValue{set: func(v int64) { *p = int(v) }, get: func() int64 { return int64(*p) }, bits: strconv.IntSize, b: b}, name, usage)
}

// Int64 defines an int64 flag with bounds b.
func Int64(fs *pflag.FlagSet, p *int64, name string, value int64, b Bounds, usage string) {
	*p = value
	fs.Var(&intValue{set: func(v int64) { *p = v }, get: func() int64 { return *p }, bits: 64, b: b}, name, usage)
}

// Duration defines a time.Duration flag with bounds b, given in nanoseconds
// (Positive, NonNegative and AtLeast(float64(time.Second)) read naturally).
func Duration(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, b Bounds, usage string) {
	*p = value
	fs.Var(&durationValue{p: p, b: b}, name, usage)
}

type floatValue struct {
	p *float64
	b Bounds
}

func (v *floatValue) String() string { return num(*v.p) }
func (v *floatValue) Type() string   { return "float" }
func (v *floatValue) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("not a number; want %s", v.b)
	}
	if err := v.b.Check(f); err != nil {
		return err
	}
	*v.p = f
	return nil
}

type intValue struct {
	set  func(int64)
	get  func() int64
	bits int
	b    Bounds
}

func (v *intValue) String() string { return strconv.FormatInt(v.get(), 10) }
func (v *intValue) Type() string   { return "int" }
func (v *intValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, v.bits)
	if err != nil {
		return fmt.Errorf("not a whole number; want %s", intWords(v.b))
	}
	if v.b.Check(float64(n)) != nil {
		return fmt.Errorf("want %s", intWords(v.b))
	}
	v.set(n)
	return nil
}

// intWords says "whole number" where the bounds say "number".
func intWords(b Bounds) string { return strings.Replace(b.String(), "number", "whole number", 1) }

type durationValue struct {
	p *time.Duration
	b Bounds
}

func (v *durationValue) String() string { return v.p.String() }
func (v *durationValue) Type() string   { return "duration" }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration; want %s", v.b.durationString())
	}
	if v.b.Check(float64(d)) != nil {
		return fmt.Errorf("want %s", v.b.durationString())
	}
	*v.p = d
	return nil
}
