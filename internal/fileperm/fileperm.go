// Package fileperm refuses files that another user could have written, as
// ssh refuses its configuration: the settings, jobs, accounts and token
// files steer where locator sends a trader's keys and what it trades, so a
// file, or any folder above it, that another user can change is not
// trusted.
package fileperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrUnsafe: a file or a folder above it is writable by group or others,
// or owned by another user than this one (or root).
var ErrUnsafe = errors.New("file could be changed by another user")

// Error names the file checked, the file or folder at fault, and the fix.
type Error struct {
	File   string // the file that was to be read
	Path   string // the file itself, or the folder above it at fault
	Reason string // "is writable by group or others (drwxrwxr-x)"
	Fix    string // a command that fixes it
	folder bool   // Path is a folder above the file
}

func (e *Error) Error() string {
	what := "it"
	if e.folder {
		what = "its folder " + e.Path
	}
	return fmt.Sprintf("%s is not trusted: %s %s, so another user could change it; fix: %s", e.File, what, e.Reason, e.Fix)
}

// Is reports ErrUnsafe.
func (e *Error) Is(target error) bool { return target == ErrUnsafe }

// Check refuses path (an *Error, errors.Is ErrUnsafe) when the file it
// names, after symbolic links, or any folder above that file or above path
// itself (where a link could be swapped) up to the root, is writable by
// group or others or owned by a user other than this process's or root. A folder writable by all with the sticky bit and
// owned by root (/tmp) is accepted: no other user can replace what is in
// it. A file that does not exist is the fs.ErrNotExist of os.Stat.
func Check(path string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	if real, err = filepath.Abs(real); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	uid := uint32(os.Getuid())
	for _, start := range []string{real, filepath.Dir(abs)} {
		for p := start; ; p = filepath.Dir(p) {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			if err := trusted(p, fi, uid); err != nil {
				err.File, err.folder = path, p != real
				return err
			}
			if p == filepath.Dir(p) {
				break
			}
		}
	}
	return nil
}

// trusted checks the owner and mode of p, a file or folder.
func trusted(p string, fi fs.FileInfo, uid uint32) *Error {
	owner := uid
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		owner = st.Uid
	}
	mode := fi.Mode()
	switch {
	case owner != uid && owner != 0:
		return &Error{Path: p, Reason: fmt.Sprintf("is owned by uid %d, not by you (uid %d) or root", owner, uid),
			Fix: "keep it in a folder of yours, or have it given to you (chown)"}
	case mode.Perm()&0o022 != 0 && !(mode.IsDir() && mode&fs.ModeSticky != 0 && owner == 0):
		return &Error{Path: p, Reason: fmt.Sprintf("is writable by group or others (%v)", mode),
			Fix: "chmod go-w " + p}
	}
	return nil
}
