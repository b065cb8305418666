"""The account API's client: finding the owner, proving the key pair,
carrying calls (see api/README.md for the protocol it speaks)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import socket
import stat
import struct
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Optional
from urllib.parse import urlencode

CALLER_HEADER = "Locator-Caller"
SESSION_HEADER = "Locator-Session"

# The locate types of the broker's numeric codes (brokercode.LocateTypeForCode).
_LOCATE_TYPES = {1: "Locate", 2: "Locate", 3: "PreBorrow", 4: "SingleUse"}

# The states a workflow ends in (states.Terminal).
_TERMINAL = {"filled", "covered", "not_needed", "priced", "credited", "declined", "canceled", "expired", "rejected", "failed"}


class LocatorError(Exception):
    """An error of the account API, with its kind (api/openapi.yaml, Error):
    input, refused, not_open, sizing, changed, used, owner_gone, failed."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __str__(self) -> str:
        return self.message


class OwnerNotRunning(LocatorError):
    """No owner of the account runs on this host: nothing was sent."""

    def __init__(self, message: str):
        super().__init__("owner_gone", message)


def _dec(v: Any) -> Decimal:
    return Decimal(str(v)) if v not in (None, "") else Decimal(0)


@dataclass(frozen=True)
class Outcome:
    """A locate's or credit-back's record: how it went (or stands)."""

    id: str
    kind: str
    symbol: str
    state: str
    requested: int
    shares: int
    # The price per share taken, else the lowest offered (a declined
    # offer's); None when the broker priced nothing.
    price_per_share: Optional[Decimal]
    locate_type: str
    reason: str
    cause: str

    @property
    def finished(self) -> bool:
        return self.state in _TERMINAL

    @property
    def located(self) -> bool:
        """The shares asked for are there: filled, already covered, or not
        needed (easy to borrow)."""
        return self.kind == "locate" and self.state in ("filled", "covered", "not_needed")

    @classmethod
    def of(cls, w: Mapping[str, Any]) -> "Outcome":
        price = _dec(w.get("Price"))
        if price <= 0:
            offered = [_dec(leg.get("price")) for leg in (w.get("Legs") or {}).values()]
            offered = [p for p in offered if p > 0]
            price = min(offered) if offered else None
        return cls(id=w["ID"], kind=w["Kind"], symbol=w["Symbol"], state=w["State"], requested=w["Requested"],
                   shares=w["Quantity"], price_per_share=price, locate_type=w.get("LocateType") or "",
                   reason=w.get("Reason") or "", cause=w.get("Cause") or "")


@dataclass(frozen=True)
class QuoteResult:
    """One price a price check saw (a row per side of a Reg SHO pair), or
    how it ended when it saw none (price_per_share None)."""

    id: str
    symbol: str
    state: str
    shares: int
    price_per_share: Optional[Decimal]
    locate_type: str
    quote_req_id: str


@dataclass(frozen=True)
class Order:
    """An order locator placed, as its owner recorded it."""

    client_order_id: str
    symbol: str
    side: str
    open_close: str
    order_type: str
    time_in_force: str
    quantity: int
    limit_price: Decimal
    state: str
    order_status: str
    executed: int
    price_avg: Decimal
    reason: str

    @classmethod
    def of(cls, o: Mapping[str, Any]) -> "Order":
        return cls(client_order_id=o["ClientOrderID"], symbol=o["Symbol"], side=o["Side"], open_close=o["OpenClose"],
                   order_type=o["OrderType"], time_in_force=o["TimeInForce"], quantity=o["Quantity"],
                   limit_price=_dec(o.get("LimitPrice")), state=o["State"], order_status=o.get("OrderStatus") or "",
                   executed=o.get("Executed") or 0, price_avg=_dec(o.get("PriceAvg")), reason=o.get("Reason") or "")


@dataclass(frozen=True)
class ShortResult:
    """How a short went: its locate, and its order (None when none was
    sent, reason saying why)."""

    locate: Optional[Outcome]
    order: Optional[Order]
    reason: str


@dataclass(frozen=True)
class Update:
    """One change of a workflow (workflow set) or of an order (order set)."""

    workflow: Optional[Outcome]
    order: Optional[Order]
    from_state: str
    event: str
    reason: str

    @classmethod
    def of(cls, u: Mapping[str, Any]) -> "Update":
        return cls(workflow=Outcome.of(u["workflow"]) if u.get("workflow") else None,
                   order=Order.of(u["order"]) if u.get("order") else None,
                   from_state=u.get("from") or "", event=u.get("event") or "", reason=u.get("reason") or "")


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
        raise LocatorError("refused", "runtime folder %s is not a folder (a link?); nothing was sent" % d)
    if st.st_uid != os.getuid():
        raise LocatorError("refused", "runtime folder %s belongs to uid %d, not to you; nothing was sent" % (d, st.st_uid))
    if st.st_mode & 0o077:
        raise LocatorError("refused", "runtime folder %s is open to other users (mode %o); nothing was sent" % (d, st.st_mode & 0o777))
    return d


def socket_path(directory: str, account: str, base_url: str) -> str:
    """The owner's socket of account at base_url in directory: named for the
    account at its broker address (service.paths)."""
    h = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:12]
    return os.path.join(directory, "%s-%s.sock" % (account, h))


class _UnixConnection(http.client.HTTPConnection):
    """HTTP on the owner's socket, refused when another user's process
    serves it (SO_PEERCRED), before anything is sent."""

    def __init__(self, path: str, timeout: Optional[float]):
        super().__init__("owner", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if self.timeout is not None:
            s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except (FileNotFoundError, ConnectionRefusedError) as e:
            s.close()
            raise OwnerNotRunning("no owner of this account runs on this host (%s: %s): start `locator serve` "
                                  "(or run a locator command that owns it); nothing was sent" % (self._path, e.strerror)) from None
        _, uid, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
        if uid != os.getuid():
            s.close()
            raise LocatorError("refused", "the socket %s is not served by a process of this user; nothing was sent" % self._path)
        self.sock = s


class Client:
    """The account API of one account, carried to its owner.

    Every call may raise LocatorError (its kind says what happened) or
    OwnerNotRunning. Nobody answers questions here: a locate or short needs
    a cap (max_price or max_cost), and is refused before anything is sent
    without one."""

    def __init__(self, *, account: str, base_url: str, key_id: str, secret: str, env: str = "live",
                 endpoint: Optional[str] = None, environ: Optional[Mapping[str, str]] = None,
                 partner: bool = False, name: Optional[str] = None, timeout: Optional[float] = None):
        if not account:
            raise LocatorError("input", "no account: set LOCATOR_ACCOUNT")
        if not base_url:
            raise LocatorError("input", "no broker address: set LOCATOR_BASE_URL")
        if not key_id or not secret:
            raise LocatorError("input", "no key pair to prove to the owner: set LOCATOR_KEY_ID and LOCATOR_SECRET "
                                        "(LOCATOR_CLIENT_ID and LOCATOR_CLIENT_SECRET with LOCATOR_AUTH=partner)")
        self.account = account
        self.base_url = base_url.removesuffix("/")
        self._secret = secret.encode()
        self._identity = hashlib.sha256(
            (self.base_url + "\n" + ("partner:" if partner else "key:") + key_id).encode()).hexdigest()[:24]
        self._socket = endpoint
        self._environ = environ if environ is not None else os.environ
        self._timeout = timeout
        self._session = ""
        caller = {"id": str(uuid.uuid4()), "name": name or "%d@%s python" % (os.getpid(), os.uname().nodename)}
        if env:
            caller["env"] = env.lower()
        self._caller = json.dumps(caller)

    @classmethod
    def from_env(cls, environ: Optional[Mapping[str, str]] = None, **kw: Any) -> "Client":
        """The client the LOCATOR_* variables name, as the CLI reads them:
        LOCATOR_ACCOUNT, LOCATOR_BASE_URL, LOCATOR_KEY_ID and LOCATOR_SECRET
        (LOCATOR_CLIENT_ID and LOCATOR_CLIENT_SECRET with
        LOCATOR_AUTH=partner), LOCATOR_ENV (default live); the owner is found
        in XDG_RUNTIME_DIR as other locator commands find it. (A settings
        file, LOCATOR_CONFIG, is not read.)"""
        e = environ if environ is not None else os.environ
        partner = (e.get("LOCATOR_AUTH") or "keys").lower() == "partner"
        key_id = e.get("LOCATOR_CLIENT_ID" if partner else "LOCATOR_KEY_ID", "")
        secret = e.get("LOCATOR_CLIENT_SECRET" if partner else "LOCATOR_SECRET", "")
        return cls(account=e.get("LOCATOR_ACCOUNT", ""), base_url=e.get("LOCATOR_BASE_URL", ""), key_id=key_id,
                   secret=secret, env=e.get("LOCATOR_ENV") or "live", environ=e, partner=partner, **kw)

    # The transport.

    def _path(self) -> str:
        if self._socket is None:
            self._socket = socket_path(runtime_dir(self._environ), self.account, self.base_url)
        return self._socket

    def _connect(self, timeout: Optional[float] = None) -> _UnixConnection:
        return _UnixConnection(self._path(), timeout if timeout is not None else self._timeout)

    @staticmethod
    def _answer(resp: http.client.HTTPResponse) -> Any:
        body = resp.read()
        if resp.status != 200:
            raise _error(resp.status, body)
        return json.loads(body) if body else None

    def _authenticate(self) -> str:
        """Earns a session: the owner's challenge answered with the key pair,
        and the owner's proof back checked (api/README.md)."""
        if self._session:
            return self._session
        conn = self._connect()
        try:
            conn.request("GET", "/v1/hello")
            hello = self._answer(conn.getresponse())
            if hello["baseURL"].rstrip("/") != self.base_url.rstrip("/"):
                raise LocatorError("refused", "the owner serves the account at %s, not at %s; nothing was sent"
                                   % (hello["baseURL"], self.base_url))
            nonce = hello["nonce"]
            proof = {"nonce": nonce, "identity": self._identity, "baseURL": self.base_url,
                     "mac": base64.b64encode(self._mac("follower", nonce)).decode()}
            conn.request("POST", "/v1/session", body=json.dumps(proof), headers={"Content-Type": "application/json"})
            earned = self._answer(conn.getresponse())
        finally:
            conn.close()
        if not hmac.compare_digest(base64.b64decode(earned["mac"]), self._mac("owner", nonce)):
            raise LocatorError("refused", "the owner did not prove it holds this account's key pair (a process posing as "
                                          "the owner); nothing was sent")
        self._session = earned["session"]
        return self._session

    def _mac(self, side: str, nonce: str) -> bytes:
        msg = "locator %s\n%s\n%s\nunix" % (side, nonce, self.base_url.rstrip("/"))
        return hmac.new(self._secret, msg.encode(), hashlib.sha256).digest()

    def _headers(self) -> dict[str, str]:
        return {"Content-Type": "application/json", CALLER_HEADER: self._caller, SESSION_HEADER: self._authenticate()}

    def _open(self, method: str, path: str, body: Any = None, timeout: Optional[float] = None):
        """Sends one request, earning a session first, and again once with a
        new session when the owner says the session expired."""
        for attempt in (0, 1):
            session = self._authenticate()
            conn = self._connect(timeout)
            data = json.dumps(body) if body is not None else None
            conn.request(method, path, body=data, headers=self._headers())
            resp = conn.getresponse()
            if resp.status != 200 and resp.getheader(SESSION_HEADER) == "expired" and attempt == 0:
                resp.read()
                conn.close()
                if self._session == session:
                    self._session = ""
                continue
            return conn, resp
        raise AssertionError("unreachable")

    def _post(self, path: str, body: Any) -> Any:
        conn, resp = self._open("POST", path, body)
        try:
            return self._answer(resp)
        finally:
            conn.close()

    def _stream(self, path: str):
        """Opens a stream of messages, one JSON object a line: its
        connection and response, once the owner has answered."""
        conn, resp = self._open("GET", path, timeout=None)
        if resp.status != 200:
            try:
                raise _error(resp.status, resp.read())
            finally:
                conn.close()
        return conn, resp

    @staticmethod
    def _message(resp: http.client.HTTPResponse) -> dict:
        """The stream's next message; the owner went away when it ends."""
        while True:
            line = resp.readline()
            if not line:
                raise LocatorError("owner_gone", "the account's owner went away")
            if line.strip():
                return json.loads(line)

    # The account API.

    def hello(self) -> dict:
        """Who owns the account (its lease), through which database."""
        conn = self._connect()
        try:
            conn.request("GET", "/v1/hello")
            return self._answer(conn.getresponse())
        finally:
            conn.close()

    def quote(self, symbols: Sequence[str] | str, shares: int = 100) -> list[QuoteResult]:
        """The broker's price of `shares` located shares of each symbol,
        without taking it: a price check each, whose offer the owner
        cancels at once (nothing is accepted)."""
        if isinstance(symbols, str):
            symbols = [symbols]
        if not symbols or shares <= 0:
            raise LocatorError("input", "quote: name a symbol and a positive number of shares; nothing was sent")
        res = self._post("/v1/quote", {"items": [{"id": _new_id(), "symbol": s.upper(), "quantity": shares} for s in symbols]})
        out: list[QuoteResult] = []
        for started in _started(res["started"]):
            w = self._end(started["id"])
            priced = sorted((leg_id, leg) for leg_id, leg in (w.get("Legs") or {}).items() if _dec(leg.get("price")) > 0)
            if not priced:
                out.append(QuoteResult(id=w["ID"], symbol=w["Symbol"], state=w["State"], shares=w["Requested"],
                                       price_per_share=None, locate_type="", quote_req_id=""))
            for leg_id, leg in priced:
                out.append(QuoteResult(id=w["ID"], symbol=w["Symbol"], state=w["State"], shares=w["Quantity"],
                                       price_per_share=_dec(leg["price"]), locate_type=_LOCATE_TYPES.get(leg.get("type"), "Unknown"),
                                       quote_req_id=leg_id))
        return out

    def locate(self, symbol: str, shares: int, *, max_price: Decimal | str | None = None,
               max_cost: Decimal | str | None = None, allow_single_use: bool = False,
               on_update: Optional[Callable[[Update], None]] = None) -> Outcome:
        """Ensures `shares` located shares of symbol, quoting only the
        shortfall, and takes an offer within the cap; returns its outcome
        once it ended (state filled, covered, not_needed, declined, ...)."""
        policy = _policy(max_price, max_cost, allow_single_use)
        if not symbol or shares <= 0:
            raise LocatorError("input", "locate: name a symbol and a positive number of shares; nothing was sent")
        res = self._post("/v1/locate", {"items": [{"id": _new_id(), "symbol": symbol.upper(), "quantity": shares, "policy": policy}]})
        return self.follow(_started(res["started"])[0]["id"], on_update=on_update)

    def credit_back(self, symbol: str = "", shares: int = 0, *, locate_type: str = "Locate",
                    unused: bool = False) -> list[Outcome]:
        """Returns located shares to the broker: `shares` of symbol's row of
        locate_type, or with unused=True every unused share of symbol (of
        every symbol when empty); returns the credit-backs' outcomes."""
        if unused and shares:
            raise LocatorError("input", "credit_back: unused takes no number of shares; nothing was sent")
        if not unused and (not symbol or shares <= 0):
            raise LocatorError("input", "credit_back: name a symbol and a positive number of shares (or unused=True); nothing was sent")
        body = {"symbol": symbol.upper(), "quantity": shares, "type": locate_type if (locate_type and not unused) else ""}
        if unused:
            body["unused"] = True
        else:
            body["id"] = _new_id()
        res = self._post("/v1/credit-back", body)
        return [self.follow(s["id"]) for s in res.get("started") or []]

    def short(self, symbol: str, shares: int, limit: Decimal | str, *, max_price: Decimal | str | None = None,
              max_cost: Decimal | str | None = None, allow_single_use: bool = False, order_type: str = "",
              time_in_force: str = "", ref_price: Decimal | str | None = None, force: bool = False) -> ShortResult:
        """Ensures the locate (quoting only the shortfall, within the cap),
        checks the sizing and sells short at limit (one Sell/Open order
        under a write-ahead clientOrderId); answers once the order is
        working or final. The owner's fat-finger guard measures limit
        against the symbol's reference price: the best the broker shows
        (the position's price, the day's last fill, the last close), else
        ref_price, the market price as the caller knows it; with none the
        short is refused. force sends it past the guard."""
        policy = _policy(max_price, max_cost, allow_single_use)
        if not symbol or shares <= 0:
            raise LocatorError("input", "short: name a symbol and a positive number of shares; nothing was sent")
        body = {"symbol": symbol.upper(), "quantity": shares, "limit": str(Decimal(str(limit))), "policy": policy,
                "locateId": _new_id(), "clientOrderId": str(uuid.uuid4())}
        guard: dict[str, Any] = {}
        if ref_price is not None:
            guard["refPrice"] = str(_dec(ref_price))
        if force:
            guard["force"] = True
        if guard:
            body["guard"] = guard
        if order_type:
            body["orderType"] = order_type
        if time_in_force:
            body["timeInForce"] = time_in_force
        res = self._post("/v1/short", body)
        return ShortResult(locate=Outcome.of(res["locate"]) if res.get("locate") else None,
                           order=Order.of(res["order"]) if res.get("order") else None, reason=res.get("reason") or "")

    def cancel(self, id: str) -> None:
        """Withdraws an unfinished workflow."""
        self._post("/v1/cancel", {"id": id, "via": "locator_client"})

    def status(self, id: str) -> Outcome:
        """Workflow id's record now (an id or a unique prefix): open, as the
        owner holds it, else its final record."""
        for w in self._post("/v1/status", {}).get("open") or []:
            if w["ID"].startswith(id):
                return Outcome.of(w)
        return self.follow(id)

    def follow(self, id: str, on_update: Optional[Callable[[Update], None]] = None) -> Outcome:
        """Waits for workflow id to end, calling on_update with each change,
        and returns its outcome."""
        return Outcome.of(self._end(id, on_update))

    def _end(self, id: str, on_update: Optional[Callable[[Update], None]] = None) -> dict:
        conn, resp = self._stream("/v1/follow?" + urlencode({"id": id}))
        try:
            while True:
                m = self._message(resp)
                if m.get("error"):
                    raise LocatorError(m["error"].get("kind", "failed"), m["error"].get("message", ""))
                if m.get("end"):
                    return m["end"]
                if m.get("update") and on_update:
                    on_update(Update.of(m["update"]))
        finally:
            conn.close()

    def updates(self) -> "Updates":
        """Every change of the account's workflows and orders from now on:
        the stream is open when this returns (nothing after is missed);
        iterate it, and close it (or use it in a with block) to stop."""
        return Updates(*self._stream("/v1/subscribe"))


class Updates:
    """The account's updates, as they come."""

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse):
        self._conn, self._resp = conn, resp

    def __iter__(self) -> Iterator[Update]:
        return self

    def __next__(self) -> Update:
        while True:
            m = Client._message(self._resp)
            if m.get("update"):
                return Update.of(m["update"])

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "Updates":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _policy(max_price: Any, max_cost: Any, allow_single_use: bool) -> dict:
    """The locate's cost policy; a locate with no cap needs a person's
    answer, and nobody can give one here: refused, nothing sent."""
    price = Decimal(str(max_price)) if max_price is not None else Decimal(0)
    cost = Decimal(str(max_cost)) if max_cost is not None else Decimal(0)
    if price < 0 or cost < 0:
        raise LocatorError("input", "a cap must be positive; nothing was sent")
    if price == 0 and cost == 0:
        raise LocatorError("input", "the locate's offer would need a person's answer and nobody can give one here: "
                                    "set max_price (or max_cost); nothing was sent")
    return {"maxPrice": str(price), "maxCost": str(cost), "autoAccept": False, "allowSingleUse": allow_single_use}


def _started(started: list) -> list:
    """The workflows a request started; the first refusal raised."""
    for s in started:
        if s.get("refused"):
            raise LocatorError(s["refused"].get("kind", "failed"), "%s: %s" % (s.get("symbol"), s["refused"].get("message", "")))
    return started


def _new_id() -> str:
    """A workflow id made up here (workflow.NewID), so that a request sent
    again after its owner went away is not started twice."""
    return "wf-" + str(uuid.uuid4())[:13]


def _error(status: int, body: bytes) -> LocatorError:
    try:
        e = json.loads(body)
        return LocatorError(e["kind"], e["message"])
    except (ValueError, KeyError, TypeError):
        return LocatorError("failed", "the owner answered %d" % status)
