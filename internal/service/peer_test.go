package service_test

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locatorhq/locator/account"
	"github.com/locatorhq/locator/internal/store/storetest"
	"github.com/locatorhq/locator/internal/wire"
)

// peerSocketEnv makes the test binary a socket's server instead of the
// tests: it listens on the path the variable names, says "ready", and
// prints how many bytes each connection sent before closing, one
// connection after the other.
const peerSocketEnv = "LOCATOR_TEST_PEER_SOCKET"

func TestMain(m *testing.M) {
	if path := os.Getenv(peerSocketEnv); path != "" {
		ln, err := net.Listen("unix", path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		os.Chmod(path, 0o777)
		fmt.Println("ready")
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(1)
			}
			n, _ := io.Copy(io.Discard, c)
			c.Close()
			fmt.Println(n)
		}
	}
	os.Exit(m.Run())
}

// A follower of this host dials only a socket in its
// own runtime folder, served by a process of its own user. A database
// writer points the owner's lease at a socket outside that folder (one of
// the writer's, which then hears nothing), then at one in the folder whose
// server runs as another user (uid 65534, a copy of this test binary): the
// follower is refused with an error saying why, and the second socket
// gets connections but not a byte, so nothing was signed. The owner keeps
// the account.
func TestFollowerDialsOnlyItsUsersSocket(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatal("this test runs a process as another user (uid 65534): run it as root (as CI does)")
	}
	db := storetest.Postgres(t)
	o := newOpener(t)
	owner, err := o.open(t, db, wire.RoleDaemon, "serve")
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	writer, err := sql.Open("pgx", db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { writer.Close() })
	point := func(endpoint string) {
		t.Helper()
		if _, err := writer.ExecContext(t.Context(), `UPDATE leases SET endpoint = $1 WHERE account = 'LV100001'`, endpoint); err != nil {
			t.Fatal(err)
		}
	}

	// Outside the runtime folder: never dialled.
	outside := filepath.Join(t.TempDir(), "owner.sock")
	ln, err := net.Listen("unix", outside)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	point(outside)
	_, err = o.open(t, db, wire.RoleCommand, "follower")
	if account.KindOf(err) != account.KindRefused || !strings.Contains(err.Error(), "outside this user's runtime folder") {
		t.Errorf("a socket outside the runtime folder: %v; want refused, saying so", err)
	}
	ln.(*net.UnixListener).SetDeadline(time.Now()) // no connection waits to be taken
	if c, err := ln.Accept(); err == nil {
		c.Close()
		t.Error("the follower connected to a socket outside its runtime folder")
	}

	// In the runtime folder, served by another user: the server binds in a
	// folder open to it, and the socket is moved into the runtime folder
	// (as a folder's mode changed by mistake would let it be made there).
	open, err := os.MkdirTemp("", "lp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(open, "server")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	bound := filepath.Join(open, "s.sock")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), peerSocketEnv+"="+bound)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("the other user's server: %q", lines.Text())
	}
	inside := filepath.Join(o.run, "other.sock")
	if err := os.Rename(bound, inside); err != nil {
		t.Fatal(err)
	}
	point(inside)
	_, err = o.open(t, db, wire.RoleCommand, "follower")
	if account.KindOf(err) != account.KindRefused || !strings.Contains(err.Error(), "not served by a process of this user") {
		t.Errorf("a socket of another user: %v; want refused, saying so", err)
	}
	// A last connection of this test's own, sending 4 bytes, marks the
	// end of the follower's (the server takes them in turn).
	end, err := net.Dial("unix", inside)
	if err != nil {
		t.Fatal(err)
	}
	end.Write([]byte("done"))
	end.Close()
	conns := 0
	for lines.Scan() && lines.Text() != "4" {
		conns++
		if lines.Text() != "0" {
			t.Errorf("the other user's socket was sent %s bytes", lines.Text())
		}
	}
	if conns == 0 {
		t.Error("the follower never reached the other user's socket: the uid check went untested")
	}
	if !owner.Owner().Held() {
		t.Error("the owner lost the account")
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
