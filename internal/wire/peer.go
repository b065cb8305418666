package wire

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"github.com/locatorhq/locator/account"
)

// PeerListener accepts only connections from processes of this user
// (SO_PEERCRED): the socket's private folder already keeps others out;
// this holds even if a folder's mode were changed.
type PeerListener struct{ net.Listener }

func (l PeerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if uid, ok := peerUID(c); ok && uid == os.Getuid() {
			return c, nil
		}
		c.Close()
	}
}

// peerUID is the user of the process at the other end of a unix socket.
func peerUID(c net.Conn) (int, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) { cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil || credErr != nil {
		return 0, false
	}
	return int(cred.Uid), true
}

// checkPeer refuses a connection to the owner's socket at path whose
// process is another user's (SO_PEERCRED, as the owner checks its
// followers): a socket another user made where a lease points is never
// sent a request, nor anything signed.
func checkPeer(c net.Conn, path string) error {
	uid, ok := peerUID(c)
	if !ok || uid != os.Getuid() {
		return account.Errorf(account.KindRefused, fmt.Sprintf("the socket %s is not served by a process of this user; nothing was sent", path))
	}
	return nil
}
