package cli

import (
	"slices"
	"strings"
)

// CheckEnum refuses the first of got that is not one of values, the values
// an enumerated flag takes: a usage error naming the flag and the values
// that exist (--urgency "critcal": want background, normal or critical).
// A value nothing can match would otherwise select nothing without a word.
func CheckEnum(flag string, got []string, values ...string) error {
	for _, v := range got {
		if !slices.Contains(values, v) {
			return Usagef("--%s %q: want %s", flag, v, OrList(values))
		}
	}
	return nil
}

// OrList joins values as prose: "a", "a or b", "a, b or c".
func OrList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
