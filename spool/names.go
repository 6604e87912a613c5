package spool

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aaep-tools/aaepkit/objstore"
)

// partName matches a rotated part's name: the destination's stem, its UTC
// start in ms, its part number, the extension.
var partName = regexp.MustCompile(`^(.+)-\d{8}T\d{6}\.\d{3}Z-\d{6,}(\.[^.]+)$`)

// DestName returns the destination name a spooled file belongs to:
// "agent-1.aaep" for agent-1.aaep itself and for its rotated parts
// (agent-1-20261123T201500.000Z-000003.aaep).
func DestName(file string) string {
	if m := partName.FindStringSubmatch(file); m != nil {
		return m[1] + m[2]
	}
	return file
}

// lockName is the lock file of destination name in its spool directory:
// one per name, so that recorders writing different names under one
// prefix share the directory.
func lockName(name string) string { return "." + name + ".lock" }

// lock takes the exclusive lock of destination name in dir without
// waiting, and writes who holds it into the lock file. On EWOULDBLOCK the
// error names the holder.
func lock(dir, name, holder string) (*os.File, error) {
	path := filepath.Join(dir, lockName(name))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	if busy, err := tryLock(f); err != nil {
		f.Close()
		if busy {
			who, _ := os.ReadFile(path)
			return nil, fmt.Errorf("spool %s: %s is in use by %s", dir, name, strings.TrimSpace(string(who)))
		}
		return nil, fmt.Errorf("spool: lock %s: %w", path, err)
	}
	if holder != "" {
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
	return f, nil
}

// locked reports whether a live process holds the lock of name in dir.
func locked(dir, name string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockName(name)), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := tryLock(f); err != nil {
		return true
	}
	unlock(f)
	return false
}

// Holder describes this process for a lock file.
func Holder(dest objstore.URL) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("aaep-capture pid %d on %s recording to %s since %s", os.Getpid(), host, dest, time.Now().UTC().Format(time.RFC3339))
}

// destFile is the metadata file of a spool directory: where its parts go.
const destFile = ".destination.json"

// Destination is where the parts of a spool directory are uploaded.
type Destination struct {
	// Prefix is the bucket and prefix: s3://BUCKET/PREFIX/.
	Prefix string `json:"prefix"`
	// Endpoint is the server (--s3-endpoint or AWS_ENDPOINT_URL_S3), empty
	// for the default; PathStyle how buckets were addressed.
	Endpoint  string `json:"endpoint,omitempty"`
	PathStyle bool   `json:"path_style,omitempty"`
}

// writeDestination records d in dir (replacing an older record: every
// recorder of the directory writes the same prefix).
func writeDestination(dir string, d Destination) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	// A temporary name of this writer's own: recorders of other names
	// in the directory write the record at the same time.
	f, err := os.CreateTemp(dir, destFile+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, destFile))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// ReadDestination reads where the parts of spool directory dir go.
func ReadDestination(dir string) (Destination, error) {
	var d Destination
	b, err := os.ReadFile(filepath.Join(dir, destFile))
	if err != nil {
		return d, fmt.Errorf("spool %s: no record of its destination: %w", dir, err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("spool %s: %s: %w", dir, destFile, err)
	}
	if u, err := objstore.Parse(d.Prefix); err != nil || !u.IsPrefix() {
		return d, fmt.Errorf("spool %s: %s names %q, not a prefix", dir, destFile, d.Prefix)
	}
	return d, nil
}

// Leftover is a destination whose parts wait under a spool root with no
// recorder holding its lock.
type Leftover struct {
	Dir   string // spool directory
	Name  string // destination name, e.g. agent-1.aaep
	Dest  string // s3://BUCKET/PREFIX/NAME, "" when the directory has no record
	Parts []string
	Bytes int64
}

// Leftovers lists the destinations under root with parts waiting and no
// live recorder (no lock held), except name in dir (the caller's own).
func Leftovers(root, dir, name string) ([]Leftover, error) {
	byKey := map[[2]string]*Leftover{}
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			return nil // an unreadable directory: not ours to report
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), Ext) {
			return nil
		}
		d, n := filepath.Dir(path), DestName(e.Name())
		if d == dir && n == name {
			return nil
		}
		k := [2]string{d, n}
		l := byKey[k]
		if l == nil {
			l = &Leftover{Dir: d, Name: n}
			if dest, err := ReadDestination(d); err == nil {
				l.Dest = dest.Prefix + n
			}
			byKey[k] = l
		}
		l.Parts = append(l.Parts, e.Name())
		if info, err := e.Info(); err == nil {
			l.Bytes += info.Size()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []Leftover
	for _, l := range byKey {
		if !locked(l.Dir, l.Name) {
			out = append(out, *l)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Dir != out[j].Dir {
			return out[i].Dir < out[j].Dir
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}
