package service

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/locatorhq/locator/account"
)

// maxSocketPath is the longest path a unix socket may have on Linux (108
// bytes with the terminating NUL in sun_path), with a margin.
const maxSocketPath = 100

// RuntimeDir is the private folder of this user's owner sockets and locks:
// $XDG_RUNTIME_DIR/locator where the session has one, else
// locator-<uid> in the temporary folder. It is created 0700 and refused
// when another user owns it or others may write or read it (a folder
// another user made first in /tmp would let them squat the sockets).
func RuntimeDir(getenv func(string) string) (string, error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("locator-%d", os.Getuid()))
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		dir = filepath.Join(d, "locator")
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", fmt.Errorf("runtime folder %s: %w", dir, err)
	}
	switch {
	case int(st.Uid) != os.Getuid():
		// Another user made it first (in a shared temporary folder, say):
		// its victim cannot remove it, so the way out is a folder of
		// their own.
		return "", fmt.Errorf("runtime folder %s belongs to uid %d, not to you (another user made it first, and you cannot remove it): make a folder only you can write and name it in XDG_RUNTIME_DIR (mkdir -m 700 ~/.locator-run && export XDG_RUNTIME_DIR=~/.locator-run), or ask an administrator to remove it", dir, st.Uid)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return "", fmt.Errorf("runtime folder %s is not a folder (a link?): remove it, or set XDG_RUNTIME_DIR to a folder only you can write", dir)
	case st.Mode&0o077 != 0:
		return "", fmt.Errorf("runtime folder %s is open to other users (mode %o): chmod 700 it", dir, st.Mode&0o777)
	}
	return dir, nil
}

// name is what an owner's socket and lock are named for: the account at
// its broker address (the same account id at two addresses is two
// accounts), never the database, so that one machine has one owner per
// account whatever database file a process opens.
func name(account, baseURL string) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(baseURL, "/")))
	return account + "-" + hex.EncodeToString(sum[:6])
}

// paths are the lock and socket of account at baseURL in the runtime
// folder.
func paths(dir, account, baseURL string) (lock, socket string, err error) {
	base := filepath.Join(dir, name(account, baseURL))
	if len(base)+5 > maxSocketPath {
		return "", "", fmt.Errorf("runtime folder %s: the path is too long for a socket; set XDG_RUNTIME_DIR to a shorter one", dir)
	}
	return base + ".lock", base + ".sock", nil
}

// checkSocketPath refuses an owner's socket, as a lease names it, outside
// the runtime folder dir: only this user makes sockets there, so a path
// elsewhere was written by someone else (a database writer pointing this
// host's followers at a socket of theirs).
func checkSocketPath(dir, path string) error {
	if filepath.Dir(filepath.Clean(path)) != filepath.Clean(dir) {
		return account.Errorf(account.KindRefused, fmt.Sprintf("the owner's lease names the socket %s, outside this user's runtime folder %s: "+
			"no owner of this user made it (whoever wrote that lease row did); nothing was sent", path, dir))
	}
	return nil
}

// machineLock is an exclusive lock on an account's lock file: held by the
// one process that owns the account on this machine, released by the
// kernel when that process dies, however it dies.
type machineLock struct{ f *os.File }

// errLocked: another process holds the lock.
var errLocked = errors.New("service: the account's lock is held")

// tryLock takes the lock at path without waiting; errLocked when another
// process holds it.
func tryLock(path string) (*machineLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("service: lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errLocked
		}
		return nil, fmt.Errorf("service: lock %s: %w", path, err)
	}
	return &machineLock{f: f}, nil
}

// unlock releases the lock (closing the file releases the flock).
func (l *machineLock) unlock() {
	if l != nil {
		l.f.Close()
	}
}
