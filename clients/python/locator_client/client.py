"""The account API's client: finding the owner, proving the key pair,
carrying calls (see api/README.md for the protocol it speaks)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Optional, Union
from urllib.parse import urlencode, urlsplit

from .errors import FailedError, InputError, LocatorError, OwnerGoneError, OwnerNotRunning, RefusedError, TransportError, error_of
from .transport import TLSConnection, UnixConnection, runtime_dir, same_broker, sockets

CALLER_HEADER = "Locator-Caller"
SESSION_HEADER = "Locator-Session"

# The locate types of the broker's numeric codes (brokercode.LocateTypeForCode).
_LOCATE_TYPES = {1: "Locate", 2: "Locate", 3: "PreBorrow", 4: "SingleUse"}

# The states a workflow ends in (states.Terminal).
_TERMINAL = {"filled", "covered", "not_needed", "priced", "credited", "declined", "canceled", "expired", "rejected", "failed"}

# The broker's bounds of a locate's quantity (spec "Short locates", quote
# and sell: 100 to 2147483647, a multiple of 100).
_MAX_LOT_SHARES = 2147483647

_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")

# Money a caller passes: a Decimal or a decimal string, never a float.
Money = Union[Decimal, str]


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
    # Why it saw no price, as the broker said it (a symbol it has none of,
    # say); empty when priced.
    reason: str = ""


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


class Client:
    """The account API of one account, carried to its owner.

    On this host it reaches the owner's unix socket and proves the
    account's key pair (api/README.md); from another host it reaches the
    owner's TLS port (address and pin, from the account's lease) with a
    bearer credential whose line in the owner's followers file ends in
    ``bearer`` (docs/library.md). Every call may raise a LocatorError: a
    subclass per kind (InputError, RefusedError, ...), OwnerNotRunning when
    nobody answers, TransportError when the connection fails. Bad
    arguments raise InputError before anything is sent. Nobody answers
    questions here: a locate or short needs a cap (max_price or max_cost)."""

    def __init__(self, *, account: str, base_url: str = "", key_id: str = "", secret: str = "", env: str = "live",
                 endpoint: Optional[str] = None, environ: Optional[Mapping[str, str]] = None, partner: bool = False,
                 name: Optional[str] = None, timeout: Optional[float] = None, address: Optional[str] = None,
                 pin: Optional[str] = None, token: Optional[str] = None) -> None:
        if not account:
            raise InputError("no account: set LOCATOR_ACCOUNT")
        if env and env.lower() not in ("live", "paper"):
            raise InputError("env %r: want live or paper" % env)
        self.account = account
        self._tls: Optional[tuple[str, str, str]] = None
        if address is not None:
            self._tls = _bearer(address, pin, token)
        elif not base_url:
            raise InputError("no broker address: set LOCATOR_BASE_URL")
        elif not key_id or not secret:
            raise InputError("no key pair to prove to the owner: set LOCATOR_KEY_ID and LOCATOR_SECRET "
                             "(LOCATOR_CLIENT_ID and LOCATOR_CLIENT_SECRET with LOCATOR_AUTH=partner)")
        self.base_url = base_url.rstrip("/")
        self._secret = secret.encode()
        self._who = ("partner:" if partner else "key:") + key_id
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

    def _connect(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        t = timeout if timeout is not None else self._timeout
        if self._tls:
            address, pin, _ = self._tls
            return TLSConnection(address, pin, self.account, t)
        if self._socket is None:
            self._socket = self._find()
        return UnixConnection(self._socket, t)

    def _find(self) -> str:
        """The owner's socket: the one the address's spelling names, else
        the account's socket whose owner serves the same broker however it
        spells it (same_broker), or one a Postgres owner named for itself."""
        directory = runtime_dir(self._environ)
        for path in sockets(directory, self.account, self.base_url):
            try:
                hello = self._hello(UnixConnection(path, self._timeout))
            except (OwnerNotRunning, TransportError):
                continue
            if hello.get("account") == self.account and same_broker(hello.get("baseURL", ""), self.base_url):
                return path
        raise OwnerNotRunning("no owner of %s at %s runs on this host (no socket of it in %s answers): start `locator serve` "
                              "(or run a locator command that owns it); nothing was sent" % (self.account, self.base_url, directory))

    def _hello(self, conn: http.client.HTTPConnection) -> dict:
        try:
            status, _, body = self._exchange(conn, "GET", "/v1/hello", None, {})
        finally:
            conn.close()
        return _answer(status, body)

    @staticmethod
    def _send(conn: http.client.HTTPConnection, method: str, path: str, data: Optional[bytes],
              headers: Mapping[str, str]) -> http.client.HTTPResponse:
        """Sends one request on conn and answers its response, body unread;
        a failed connection is a TransportError."""
        try:
            conn.request(method, path, body=data, headers=dict(headers))
            return conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            raise TransportError("the connection to the account's owner failed (%s): whether %s %s reached it is unknown"
                                 % (e, method, path)) from None

    @classmethod
    def _exchange(cls, conn: http.client.HTTPConnection, method: str, path: str, data: Optional[bytes],
                  headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        """One request and its whole answer on conn: status, headers, body."""
        return _read(cls._send(conn, method, path, data, headers), method, path)

    def _authenticate(self) -> str:
        """Earns a session on the socket: the owner's challenge answered with
        the key pair, and the owner's proof back checked (api/README.md).
        The proof names the broker address as the owner spells it, once
        same_broker says it is this client's."""
        if self._session:
            return self._session
        conn = self._connect()
        try:
            status, _, body = self._exchange(conn, "GET", "/v1/hello", None, {})
            hello = _answer(status, body)
            if not same_broker(hello["baseURL"], self.base_url):
                raise RefusedError("the owner serves the account at %s, not at %s; nothing was sent" % (hello["baseURL"], self.base_url))
            base, nonce = hello["baseURL"].rstrip("/"), hello["nonce"]
            proof = {"nonce": nonce, "identity": hashlib.sha256((base + "\n" + self._who).encode()).hexdigest()[:24],
                     "baseURL": base, "mac": base64.b64encode(self._mac("follower", nonce, base)).decode()}
            status, _, body = self._exchange(conn, "POST", "/v1/session", json.dumps(proof).encode(),
                                             {"Content-Type": "application/json"})
            earned = _answer(status, body)
        finally:
            conn.close()
        if not hmac.compare_digest(base64.b64decode(earned["mac"]), self._mac("owner", nonce, base)):
            raise RefusedError("the owner did not prove it holds this account's key pair (a process posing as the owner); "
                               "nothing was sent")
        self._session = earned["session"]
        return self._session

    def _mac(self, side: str, nonce: str, base: str) -> bytes:
        msg = "locator %s\n%s\n%s\nunix" % (side, nonce, base)
        return hmac.new(self._secret, msg.encode(), hashlib.sha256).digest()

    def _headers(self) -> dict[str, str]:
        """A call's headers: its caller, and the session earned on the socket
        or the bearer on the TLS port."""
        h = {"Content-Type": "application/json", CALLER_HEADER: self._caller}
        if self._tls:
            h["Authorization"] = "Bearer " + self._tls[2]
        else:
            h[SESSION_HEADER] = self._authenticate()
        return h

    def _open(self, method: str, path: str, data: Optional[bytes] = None,
              timeout: Optional[float] = None) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Sends one request, earning a session first, and again once with a
        new session when the owner says the session expired; answers the
        connection and the response, its body unread."""
        for attempt in (0, 1):
            headers = self._headers()
            conn = self._connect(timeout)
            resp = self._send(conn, method, path, data, headers)
            if resp.status != 200 and resp.getheader(SESSION_HEADER) == "expired" and attempt == 0:
                conn.close()
                if self._session == headers.get(SESSION_HEADER):
                    self._session = ""
                continue
            return conn, resp
        raise AssertionError("unreachable")

    def _post(self, path: str, body: Any) -> Any:
        status, _, data = self.request("POST", path, body)
        return _answer(status, data)

    def _stream(self, path: str) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
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
            try:
                line = resp.readline()
            except (OSError, http.client.HTTPException) as e:
                raise TransportError("the account's owner's stream failed (%s)" % e) from None
            if not line:
                raise OwnerGoneError("the account's owner went away")
            if line.strip():
                return json.loads(line)

    # The account API.

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, str], bytes]:
        """A call of any route of the account API (api/openapi.yaml) this
        client does not wrap, on an earned session (or the bearer): body a
        JSON value (dict, list, ...) sent as JSON, or bytes sent as they
        are; answers the status, the headers and the whole body, whatever
        the status (a stream's body ends only when the stream does: use the
        wrapped calls for those)."""
        if method not in _METHODS:
            raise InputError("request: method %r: want one of %s; nothing was sent" % (method, ", ".join(_METHODS)))
        if not isinstance(path, str) or not path.startswith("/v1/") or any(c.isspace() for c in path):
            raise InputError("request: path %r: want a route of the account API, /v1/...; nothing was sent" % (path,))
        data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
        conn, resp = self._open(method, path, data)
        try:
            return _read(resp, method, path)
        finally:
            conn.close()

    def hello(self) -> dict:
        """Who owns the account (its lease), through which database: on the
        socket (the TLS port refuses the handshake's routes to a bearer)."""
        return self._hello(self._connect())

    def quote(self, symbols: Union[Sequence[str], str], shares: int = 100) -> list[QuoteResult]:
        """The broker's price of `shares` located shares of each symbol,
        without taking it: a price check each, whose offer the owner
        cancels at once (nothing is accepted). A symbol the broker prices
        not comes back with price_per_share None and its reason."""
        names = [_symbol(s) for s in ([symbols] if isinstance(symbols, str) else symbols)]
        if not names:
            raise InputError("quote: name a symbol; nothing was sent")
        n = _lot("quote", shares)
        res = self._post("/v1/quote", {"items": [{"id": _new_id(), "symbol": s, "quantity": n} for s in names]})
        out: list[QuoteResult] = []
        for started in _started(res["started"]):
            w = self._end(started["id"])
            priced = sorted((leg_id, leg) for leg_id, leg in (w.get("Legs") or {}).items() if _dec(leg.get("price")) > 0)
            if not priced:
                out.append(QuoteResult(id=w["ID"], symbol=w["Symbol"], state=w["State"], shares=w["Requested"],
                                       price_per_share=None, locate_type="", quote_req_id="",
                                       reason=w.get("Reason") or w.get("Cause") or ""))
            for leg_id, leg in priced:
                out.append(QuoteResult(id=w["ID"], symbol=w["Symbol"], state=w["State"], shares=w["Quantity"],
                                       price_per_share=_dec(leg["price"]), locate_type=_LOCATE_TYPES.get(leg.get("type"), "Unknown"),
                                       quote_req_id=leg_id))
        return out

    def locate(self, symbol: str, shares: int, *, max_price: Optional[Money] = None, max_cost: Optional[Money] = None,
               allow_single_use: bool = False, on_update: Optional[Callable[[Update], None]] = None) -> Outcome:
        """Ensures `shares` located shares of symbol, quoting only the
        shortfall, and takes an offer within the cap; returns its outcome
        once it ended (state filled, covered, not_needed, declined, ...)."""
        return self.locate_all([(symbol, shares)], max_price=max_price, max_cost=max_cost,
                               allow_single_use=allow_single_use, on_update=on_update)[0]

    def locate_all(self, items: Sequence[tuple[str, int]], *, max_price: Optional[Money] = None,
                   max_cost: Optional[Money] = None, allow_single_use: bool = False,
                   on_update: Optional[Callable[[Update], None]] = None) -> list[Outcome]:
        """A batch of locates in one request (the API's LocateRequest), each
        (symbol, shares) under the same cap; returns their outcomes in the
        items' order once all ended. Every item is checked before anything
        is sent; when the owner refuses some, the error names them, and the
        others go on (follow them with status)."""
        policy = _policy(max_price, max_cost, allow_single_use)
        if isinstance(items, (str, bytes)) or not items:
            raise InputError("locate: name at least one (symbol, shares); nothing was sent")
        body = []
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise InputError("locate: %r: want a (symbol, shares) pair; nothing was sent" % (item,))
            body.append({"id": _new_id(), "symbol": _symbol(item[0]), "quantity": _lot("locate", item[1]), "policy": policy})
        res = self._post("/v1/locate", {"items": body})
        return [self.follow(s["id"], on_update=on_update) for s in _started(res["started"])]

    def credit_back(self, symbol: str = "", shares: int = 0, *, locate_type: str = "Locate",
                    unused: bool = False) -> list[Outcome]:
        """Returns located shares to the broker: `shares` of symbol's row of
        locate_type, or with unused=True every unused share of symbol (of
        every symbol when empty); returns the credit-backs' outcomes."""
        if unused and shares:
            raise InputError("credit_back: unused takes no number of shares; nothing was sent")
        body: dict[str, Any] = {"symbol": _symbol(symbol) if symbol or not unused else ""}
        if unused:
            body.update(quantity=0, type="", unused=True)
        else:
            body.update(quantity=_lot("credit_back", shares), type=locate_type, id=_new_id())
        res = self._post("/v1/credit-back", body)
        return [self.follow(s["id"]) for s in res.get("started") or []]

    def short(self, symbol: str, shares: int, limit: Money, *, max_price: Optional[Money] = None,
              max_cost: Optional[Money] = None, allow_single_use: bool = False, order_type: str = "",
              time_in_force: str = "", ref_price: Optional[Money] = None, force: bool = False) -> ShortResult:
        """Ensures the locate (quoting only the shortfall, within the cap),
        checks the sizing and sells short at limit (one Sell/Open order
        under a write-ahead clientOrderId); answers once the order is
        working or final. The owner's fat-finger guard measures limit
        against the symbol's reference price: the best the broker shows
        (the position's price, the day's last fill, the last close), else
        ref_price, the market price as the caller knows it; with none the
        short is refused. force sends it past the guard."""
        policy = _policy(max_price, max_cost, allow_single_use)
        price = _money("short: limit", limit)
        if price <= 0:
            raise InputError("short: limit %s: want a positive price; nothing was sent" % price)
        body = {"symbol": _symbol(symbol), "quantity": _count("short", shares), "limit": str(price), "policy": policy,
                "locateId": _new_id(), "clientOrderId": str(uuid.uuid4())}
        guard: dict[str, Any] = {}
        if ref_price is not None:
            guard["refPrice"] = str(_money("short: ref_price", ref_price))
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
        self._post("/v1/cancel", {"id": _id(id), "via": "locator_client"})

    def status(self, id: str) -> Outcome:
        """Workflow id's record now (an id or a unique prefix): open, as the
        owner holds it, else its final record."""
        id = _id(id)
        for w in self._post("/v1/status", {}).get("open") or []:
            if w["ID"].startswith(id):
                return Outcome.of(w)
        return self.follow(id)

    def follow(self, id: str, on_update: Optional[Callable[[Update], None]] = None) -> Outcome:
        """Waits for workflow id to end, calling on_update with each change,
        and returns its outcome."""
        return Outcome.of(self._end(_id(id), on_update))

    def _end(self, id: str, on_update: Optional[Callable[[Update], None]] = None) -> dict:
        conn, resp = self._stream("/v1/follow?" + urlencode({"id": id}))
        try:
            while True:
                m = self._message(resp)
                if m.get("error"):
                    raise error_of(m["error"].get("kind", "failed"), m["error"].get("message", ""))
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

    def __init__(self, conn: http.client.HTTPConnection, resp: http.client.HTTPResponse) -> None:
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


# The checks of a caller's arguments: each raises InputError, before
# anything is sent.

_SYMBOL = re.compile(r"[A-Z0-9][A-Z0-9./-]{0,19}")


def _symbol(s: Any) -> str:
    """A symbol as the broker spells it (upper case), or InputError: empty,
    not a string, spaces or characters no symbol has."""
    if not isinstance(s, str) or not _SYMBOL.fullmatch(s.strip().upper()):
        raise InputError("symbol %r: want a ticker such as HTBX (letters, digits, . / -); nothing was sent" % (s,))
    return s.strip().upper()


def _count(what: str, n: Any) -> int:
    """A positive whole number of shares, or InputError."""
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise InputError("%s: %r shares: want a positive whole number; nothing was sent" % (what, n))
    return n


def _lot(what: str, n: Any) -> int:
    """A locate's quantity as the broker takes it (spec "Short locates",
    quote and sell: 100 to 2147483647, a multiple of 100), or InputError."""
    if _count(what, n) % 100 or n > _MAX_LOT_SHARES:
        raise InputError("%s: %d shares: the broker locates in lots of 100 (100 to %d); nothing was sent" % (what, n, _MAX_LOT_SHARES))
    return n


def _money(what: str, v: Any) -> Decimal:
    """Money as a caller passes it, a Decimal or a decimal string, finite
    and not negative; a float (not exact), "abc" or "NaN" is InputError."""
    if isinstance(v, Decimal):
        d = v
    elif isinstance(v, str):
        try:
            d = Decimal(v.strip())
        except InvalidOperation:
            raise InputError("%s: %r is not a decimal number; nothing was sent" % (what, v)) from None
    else:
        raise InputError("%s: %r: want a decimal string or a Decimal (a %s is not exact money); nothing was sent"
                         % (what, v, type(v).__name__))
    if not d.is_finite() or d < 0:
        raise InputError("%s: %s: want a finite amount, 0 or more; nothing was sent" % (what, v))
    return d


def _id(id: Any) -> str:
    """A workflow id (or a prefix of one), or InputError."""
    if not isinstance(id, str) or not id.strip():
        raise InputError("want a workflow id (wf-...), not %r; nothing was sent" % (id,))
    return id.strip()


def _bearer(address: Any, pin: Any, token: Any) -> tuple[str, str, str]:
    """The owner's TLS port as a bearer reaches it: its address
    (https://host:port, the lease's), the pin of its certificate (64 hex
    digits, the lease's) and the credential; InputError, never quoting the
    credential, when one is missing or malformed."""
    u = urlsplit(address) if isinstance(address, str) else None
    try:
        port = u.port if u else None
    except ValueError:
        port = None
    if not u or u.scheme != "https" or not u.hostname or not port or u.path.strip("/") or u.query:
        raise InputError("address %r: want the owner's https://host:port (its lease's address); nothing was sent" % (address,))
    if not isinstance(pin, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", pin):
        raise InputError("pin: want the 64 hex digits of the owner's certificate pin (its lease's); nothing was sent")
    if not isinstance(token, str) or not token or any(c.isspace() for c in token):
        raise InputError("token: want the follower host's credential (locator owner-credential), one word; nothing was sent")
    return address, pin.lower(), token


def _policy(max_price: Any, max_cost: Any, allow_single_use: bool) -> dict:
    """The locate's cost policy; a locate with no cap needs a person's
    answer, and nobody can give one here: refused, nothing sent."""
    price = _money("max_price", max_price) if max_price is not None else Decimal(0)
    cost = _money("max_cost", max_cost) if max_cost is not None else Decimal(0)
    if price == 0 and cost == 0:
        raise InputError("the locate's offer would need a person's answer and nobody can give one here: "
                         "set max_price (or max_cost); nothing was sent")
    return {"maxPrice": str(price), "maxCost": str(cost), "autoAccept": False, "allowSingleUse": bool(allow_single_use)}


def _started(started: list) -> list:
    """The workflows a request started, or the error of the refused ones
    (the first's kind; every refused symbol and the started ids named)."""
    refused = [s for s in started if s.get("refused")]
    if not refused:
        return started
    words = "; ".join("%s: %s" % (s.get("symbol"), s["refused"].get("message", "")) for s in refused)
    going = [s["id"] for s in started if not s.get("refused")]
    if going:
        words += " (started, and going on: %s)" % ", ".join(going)
    raise error_of(refused[0]["refused"].get("kind", "failed"), words)


def _new_id() -> str:
    """A workflow id made up here (workflow.NewID), so that a request sent
    again after its owner went away is not started twice."""
    return "wf-" + str(uuid.uuid4())[:13]


def _read(resp: http.client.HTTPResponse, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """A response's status, headers and whole body; a cut answer is a
    TransportError."""
    try:
        return resp.status, dict(resp.headers.items()), resp.read()
    except (OSError, http.client.HTTPException) as e:
        raise TransportError("the answer of %s %s was cut (%s): whether it was carried out is unknown" % (method, path, e)) from None


def _answer(status: int, body: bytes) -> Any:
    """An answer's JSON, or the error it carries."""
    if status != 200:
        raise _error(status, body)
    return json.loads(body) if body else None


def _error(status: int, body: bytes) -> LocatorError:
    try:
        e = json.loads(body)
        return error_of(e["kind"], e["message"])
    except (ValueError, KeyError, TypeError):
        return FailedError("the owner answered %d" % status)
