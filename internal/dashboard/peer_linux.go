package dashboard

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// peerUIDKnown says that this system tells who owns a peer's socket
// (peerUID), so a loopback peer of another user is refused (ownUser).
const peerUIDKnown = true

// peerUID is the user id owning the socket at peer that is connected to
// local, both on this machine: the kernel's table of TCP sockets
// (/proc/net/tcp, tcp6) names each socket's owner, as identd reads it.
// An IPv4 pair is looked for in tcp, then as IPv4-mapped in tcp6 (a
// listener on both families).
func peerUID(peer, local netip.AddrPort) (int, bool) {
	if peer.Addr().Is4() {
		if uid, ok := findUID("/proc/net/tcp", peer, local); ok {
			return uid, true
		}
		mapped := func(a netip.AddrPort) netip.AddrPort {
			return netip.AddrPortFrom(netip.AddrFrom16(a.Addr().As16()), a.Port())
		}
		peer, local = mapped(peer), mapped(local)
	}
	return findUID("/proc/net/tcp6", peer, local)
}

// findUID reads the owner of the socket at peer connected to local from
// file. A socket in TIME_WAIT is passed over: the kernel keeps only its
// addresses and shows it as root's (uid 0), and a new connection may reuse
// its pair of addresses.
func findUID(file string, peer, local netip.AddrPort) (int, bool) {
	f, err := os.Open(file)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	want := procAddr(peer) + " " + procAddr(local)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[1]+" "+fields[2] != want || fields[3] == tcpTimeWait {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		return uid, err == nil
	}
	return 0, false
}

// tcpTimeWait is the TIME_WAIT state as the kernel's table writes it (st).
const tcpTimeWait = "06"

// procAddr writes a as /proc/net/tcp does: the address's 32-bit words in
// the machine's byte order, in hex, then the port.
func procAddr(a netip.AddrPort) string {
	var b strings.Builder
	ip := a.Addr().AsSlice()
	for i := 0; i < len(ip); i += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(ip[i:i+4]))
	}
	return fmt.Sprintf("%s:%04X", b.String(), a.Port())
}
