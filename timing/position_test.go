package timing

import (
	"strings"
	"testing"
	"time"
)

func TestParsePosition(t *testing.T) {
	index := func(i int64) Position { return Position{Set: true, ByIndex: true, Index: i} }
	offset := func(d time.Duration) Position { return Position{Set: true, Time: d} }
	tests := []struct {
		in      string
		want    Position
		wantErr string // a part of the error; "" for none
	}{
		{in: "", want: Position{}},
		{in: "#0", want: index(0)},
		{in: "0", want: index(0)},
		{in: "#120", want: index(120)},
		{in: "120", want: index(120)},
		{in: " #7 ", want: index(7)},
		{in: "#9223372036854775807", want: index(1<<63 - 1)},
		{in: "1m30s", want: offset(90 * time.Second)},
		{in: "250ms", want: offset(250 * time.Millisecond)},
		{in: "1h2m3.5s", want: offset(time.Hour + 2*time.Minute + 3500*time.Millisecond)},
		{in: "1:30", want: offset(90 * time.Second)},
		{in: "01:02:03.5", want: offset(time.Hour + 2*time.Minute + 3500*time.Millisecond)},
		{in: "0:00.250", want: offset(250 * time.Millisecond)},
		{in: "90:00", want: offset(90 * time.Minute)},
		{in: "0:59.999999999", want: offset(59*time.Second + 999999999)},

		{in: " ", wantErr: "bad position"},
		{in: "#", wantErr: "record number"},
		{in: "#-1", wantErr: "record number"},
		{in: "#x", wantErr: "record number"},
		{in: "#abc", wantErr: "record number"},
		{in: "#9223372036854775808", wantErr: "record number"},
		{in: "99999999999999999999", wantErr: "record number"},
		{in: "-5s", wantErr: "bad position"},
		{in: "-5", wantErr: "bad position"},
		{in: "1.5", wantErr: "bad position"},
		{in: "45.25", wantErr: "bad position"}, // a bare number with a fraction: neither index nor duration
		{in: "soon", wantErr: "bad position"},
		{in: "1:60", wantErr: "below 60"},
		{in: "1:75", wantErr: "below 60"},
		{in: "1:75:00", wantErr: "below 60"},
		{in: "1:2:3:4", wantErr: "clock"},
		{in: "1:x", wantErr: "clock"},
		{in: "1:30.", wantErr: "clock"},
		{in: "1:.5", wantErr: "clock"},
		{in: ":30", wantErr: "clock"},
		{in: "1:NaN", wantErr: "clock"},
		{in: "1:0x1p3", wantErr: "clock"},
		{in: "1:-5", wantErr: "clock"},
		{in: "1:5e1", wantErr: "clock"},
		{in: "9999999999:00", wantErr: "clock"},
		{in: "999999999:59:59", wantErr: "out of range"},
	}
	for _, tc := range tests {
		got, err := ParsePosition(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParsePosition(%q) = %+v, error %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParsePosition(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		back, err := ParsePosition(got.String())
		if err != nil || back != got {
			t.Errorf("round trip of %q via %q = %+v, %v", tc.in, got.String(), back, err)
		}
	}
}

// FuzzParsePosition checks that ParsePosition never panics, never accepts a
// negative position, and that what it accepts prints back to a string it
// reads the same way.
func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{"", "#12", "12", "1m30s", "1:30", "01:02:03.5", "-1", "1:75", "99999999999999999999", "1:NaN", "999999999:59:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePosition(s)
		if err != nil {
			return
		}
		if p.Time < 0 || p.Index < 0 || (p.Set != (s != "")) || (!p.Set && p != Position{}) || (p.ByIndex && p.Time != 0) || (!p.ByIndex && p.Index != 0) {
			t.Fatalf("ParsePosition(%q) = %+v", s, p)
		}
		q, err := ParsePosition(p.String())
		if err != nil || q != p {
			t.Fatalf("ParsePosition(%q) = %+v, which prints as %q and reads back as %+v, %v", s, p, p.String(), q, err)
		}
	})
}
