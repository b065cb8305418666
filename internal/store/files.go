package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotPrivate: a database file is readable or writable by other users
// and this process cannot change that (the file is another user's).
var ErrNotPrivate = errors.New("database file is not private")

// makePrivate creates the database file at path if it is missing, mode
// 0600 whatever the umask or the folder's mode, and takes group and other
// permissions off it and off its -wal, -shm and -journal files where they
// exist. SQLite creates those with the database file's permissions, so
// after this every file of the database is this user's alone: the WAL
// holds recent records in clear.
func makePrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: open %s: %w", path, err)
	}
	f.Close()
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store: %w", err)
		}
		if fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("store: %s is %s, open to other users, and cannot be made private (%v): %w", p, fi.Mode().Perm(), err, ErrNotPrivate)
		}
	}
	return nil
}
