//go:build unix

package rendertmp

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownedByUser refuses a file another user owns.
func ownedByUser(st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("has no owner to check")
	}
	if me := os.Geteuid(); int(sys.Uid) != me {
		return fmt.Errorf("belongs to uid %d, not to you (uid %d): another user made it", sys.Uid, me)
	}
	return nil
}
