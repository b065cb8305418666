"""Reaching an account's owner: its unix socket on this host (found as
locator's own commands find it, api/README.md "Finding the owner"), or its
TLS port from another host, pinned to the certificate its lease names."""

from __future__ import annotations

import glob
import hashlib
import hmac
import http.client
import os
import socket
import ssl
import stat
import struct
from collections.abc import Mapping
from typing import Optional
from urllib.parse import urlsplit

from .errors import OwnerNotRunning, RefusedError, TransportError


def runtime_dir(environ: Mapping[str, str]) -> str:
    """This user's folder of owner sockets (service.RuntimeDir):
    $XDG_RUNTIME_DIR/locator, else locator-<uid> in the temporary folder;
    refused when another user owns it or others may use it."""
    if environ.get("XDG_RUNTIME_DIR"):
        d = os.path.join(environ["XDG_RUNTIME_DIR"], "locator")
    else:
        d = os.path.join(environ.get("TMPDIR") or "/tmp", "locator-%d" % os.getuid())
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        raise OwnerNotRunning("no owner runs for this user on this host (no runtime folder %s): "
                              "start `locator serve`; nothing was sent" % d) from None
    if not stat.S_ISDIR(st.st_mode):
        raise RefusedError("runtime folder %s is not a folder (a link?); nothing was sent" % d)
    if st.st_uid != os.getuid():
        raise RefusedError("runtime folder %s belongs to uid %d, not to you; nothing was sent" % (d, st.st_uid))
    if st.st_mode & 0o077:
        raise RefusedError("runtime folder %s is open to other users (mode %o); nothing was sent" % (d, st.st_mode & 0o777))
    return d


def socket_path(directory: str, account: str, base_url: str) -> str:
    """The socket locator names for account at base_url in directory
    (service.name): the first 12 hex digits of SHA-256 of the address as
    spelled, without its trailing slashes. An owner on Postgres adds its
    pid to the name, and another spelling of the same address is another
    name: sockets() finds those."""
    h = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:12]
    return os.path.join(directory, "%s-%s.sock" % (account, h))


def sockets(directory: str, account: str, base_url: str) -> list[str]:
    """The sockets in directory that may be account's owner's at base_url:
    the one its spelling names first, then every other of the account
    (another spelling's, a Postgres owner's), which the owner's hello says
    whether it serves the same broker (same_broker)."""
    named = socket_path(directory, account, base_url)
    others = sorted(p for p in glob.glob(os.path.join(glob.escape(directory), glob.escape(account) + "-*.sock")) if p != named)
    return ([named] if os.path.exists(named) else []) + others


_LOOPBACK = ("localhost", "::1")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def same_broker(a: str, b: str) -> bool:
    """Whether two spellings of a broker address name the same broker:
    scheme and host in any case, this machine's loopback however named
    (localhost, 127.0.0.0/8, ::1: brokerclient.Loopback), the scheme's
    default port written or not, trailing slashes."""
    return _broker_key(a) == _broker_key(b)


def _broker_key(url: str) -> tuple:
    u = urlsplit(url.strip())
    scheme = u.scheme.lower()
    try:
        port = u.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return (url,)
    host = (u.hostname or "").lower()
    if host in _LOOPBACK or host.startswith("127."):
        host = "loopback"
    return scheme, host, port, u.path.rstrip("/"), u.query


class UnixConnection(http.client.HTTPConnection):
    """HTTP on the owner's socket, refused when another user's process
    serves it (SO_PEERCRED), before anything is sent."""

    def __init__(self, path: str, timeout: Optional[float]) -> None:
        super().__init__("owner", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            s.settimeout(self.timeout)
        try:
            s.connect(self.path)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            s.close()
            raise OwnerNotRunning("no owner of this account runs on this host (%s: %s): start `locator serve` "
                                  "(or run a locator command that owns it); nothing was sent" % (self.path, e.strerror)) from None
        _, uid, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        if uid != os.getuid():
            s.close()
            raise RefusedError("the socket %s is not served by a process of this user; nothing was sent" % self.path)
        self.sock = s


class TLSConnection(http.client.HTTPConnection):
    """HTTP over TLS 1.3 to the owner's port (serve --owner-listen), as the
    owner's bearers reach it: the account as SNI, and the certificate
    checked against the pin the account's lease holds (self-signed: the
    pin, not an authority, says it is the owner's), before anything is
    sent."""

    def __init__(self, address: str, pin: str, account: str, timeout: Optional[float]) -> None:
        u = urlsplit(address)
        super().__init__(u.hostname or "", u.port, timeout=timeout)
        self.pin, self.account, self.address = pin, account, address

    def connect(self) -> None:
        try:
            raw = socket.create_connection((self.host, self.port), self.timeout)
        except OSError as e:
            raise OwnerNotRunning("no owner of this account answers at %s (%s); nothing was sent" % (self.address, e)) from None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        try:
            s = ctx.wrap_socket(raw, server_hostname=self.account)
        except (ssl.SSLError, OSError) as e:
            raw.close()
            raise TransportError("the TLS handshake with %s failed (%s); nothing was sent" % (self.address, e)) from None
        shown = pin_of(s.getpeercert(binary_form=True) or b"")
        if not hmac.compare_digest(shown, self.pin.lower()):
            s.close()
            raise RefusedError("%s showed a certificate of pin %s, not the owner's %s (the lease's): a host posing as the "
                               "owner, or an owner that started again (read its lease again); nothing was sent"
                               % (self.address, shown, self.pin))
        self.sock = s


def pin_of(cert: bytes) -> str:
    """The pin of a DER certificate as locator writes it in the lease
    (wire.PinOf): hex SHA-256 of its SubjectPublicKeyInfo, the seventh
    element of the TBSCertificate when the version is written (RFC 5280
    section 4.1), the sixth when not."""
    tbs = _der(cert, 0)[1]
    _, at, end = _der(cert, tbs)
    fields = []
    while at < end:
        fields.append(at)
        at = _der(cert, at)[2]
    spki = fields[6] if cert[fields[0]] == 0xA0 else fields[5]
    return hashlib.sha256(cert[spki:_der(cert, spki)[2]]).hexdigest()


def _der(b: bytes, at: int) -> tuple[int, int, int]:
    """The DER element at offset at: its tag, where its contents start and
    where it ends."""
    n, start = b[at + 1], at + 2
    if n & 0x80:
        width = n & 0x7F
        n, start = int.from_bytes(b[start:start + width], "big"), start + width
    return b[at], start, start + n
