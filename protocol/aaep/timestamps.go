package aaep

import "time"

// tsParse is the result of reading a timestamp by the prose-strict grammar
// of §3.2.5 with any number of fraction digits.
type tsParse struct {
	t        time.Time
	ok       bool   // the form and calendar are valid (fraction length aside)
	hasFrac  bool   // a fraction is present
	fracLen  int    // number of fraction digits
	problem  string // why it is not ok
	tzOffset int    // seconds east of UTC
}

// parseStrict reads s as YYYY-MM-DDTHH:MM:SS[.f+](Z|±HH:MM) with uppercase T
// and Z and a real calendar date; seconds may be 60 (a leap second, as RFC
// 3339 allows). The precision rule (0, 3 or 6 digits) is left to the caller.
func parseStrict(s string) tsParse {
	var p tsParse
	n := len(s)
	if n < 20 {
		p.problem = "too short for YYYY-MM-DDTHH:MM:SSZ"
		return p
	}
	digits := func(i, w int) (int, bool) {
		v := 0
		for j := i; j < i+w; j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	year, ok1 := digits(0, 4)
	month, ok2 := digits(5, 2)
	day, ok3 := digits(8, 2)
	hour, ok4 := digits(11, 2)
	min, ok5 := digits(14, 2)
	sec, ok6 := digits(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		p.problem = "not in the form YYYY-MM-DDTHH:MM:SS"
		return p
	}
	if s[10] != 'T' {
		p.problem = "the date and time must be separated by an uppercase T"
		return p
	}
	i := 19
	if i < n && s[i] == '.' {
		p.hasFrac = true
		i++
		start := i
		for i < n && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		p.fracLen = i - start
		if p.fracLen == 0 {
			p.problem = "a decimal point without fraction digits"
			return p
		}
	}
	nsec := 0
	if p.hasFrac {
		f := s[20 : 20+p.fracLen]
		for k := 0; k < 9; k++ {
			nsec *= 10
			if k < len(f) {
				nsec += int(f[k] - '0')
			}
		}
	}
	switch {
	case i == n-1 && s[i] == 'Z':
	case i+6 == n && (s[i] == '+' || s[i] == '-') && s[i+3] == ':':
		oh, okh := digits(i+1, 2)
		om, okm := digits(i+4, 2)
		if !okh || !okm || oh > 23 || om > 59 {
			p.problem = "the UTC offset is not ±HH:MM"
			return p
		}
		p.tzOffset = oh*3600 + om*60
		if s[i] == '-' {
			p.tzOffset = -p.tzOffset
		}
	case i < n && s[i] == 'z':
		p.problem = "the UTC designator must be an uppercase Z"
		return p
	default:
		p.problem = "it must end in Z or a ±HH:MM offset"
		return p
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || min > 59 || sec > 60 {
		p.problem = "it is not a real calendar date and time"
		return p
	}
	loc := time.UTC
	if p.tzOffset != 0 {
		loc = time.FixedZone("", p.tzOffset)
	}
	p.t = time.Date(year, time.Month(month), day, hour, min, sec, nsec, loc)
	p.ok = true
	return p
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseLenient reads an RFC 3339 instant the way Go does, for timestamps
// the prose-strict grammar refuses.
func parseLenient(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}
