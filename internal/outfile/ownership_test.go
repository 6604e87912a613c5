package outfile

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

// TestOwnershipError: a replacement that cannot keep the output's owner is
// refused as another user's file only when it is one; the user's own file
// whose group cannot be kept says so (issue 34: "owned by another user"
// when only the group differed).
func TestOwnershipError(t *testing.T) {
	if err := ownershipError(&ownerID{uid: 1000, gid: 0}, 1000); !errors.Is(err, ErrGroup) || strings.Contains(err.Error(), "another user") || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("own file, foreign group: %v, want ErrGroup", err)
	}
	if err := ownershipError(&ownerID{uid: 0, gid: 0}, 1000); !errors.Is(err, ErrOwner) || !strings.Contains(err.Error(), "owned by another user") {
		t.Errorf("another user's file: %v, want ErrOwner", err)
	}
	e := &Error{Op: "refuse", Path: "run.aaep", Err: ErrGroup}
	if got := e.Error(); !strings.HasPrefix(got, "run.aaep: its group is not one of yours") {
		t.Errorf("Error() = %q", got)
	}
}
