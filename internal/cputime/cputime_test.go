package cputime

import "testing"

// Work on the CPU shows in Used, which never goes back.
func TestUsedGrowsWithWork(t *testing.T) {
	before := Used()
	x := uint64(1)
	for Used() == before {
		for range 1_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if after := Used(); after < before {
		t.Errorf("Used went back from %v to %v (x=%d)", before, after, x)
	}
}
