//go:build !unix

package rendertmp

import "io/fs"

// ownedByUser cannot check an owner here (Windows keeps owners in ACLs);
// the user cache directory (%LocalAppData%) is the user's own.
func ownedByUser(fs.FileInfo) error { return nil }
