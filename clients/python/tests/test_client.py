"""locator_client against a real `locator sim` and `locator serve`, both
started here (the Go test TestPythonClient in clients/python runs this with
LOCATOR_BIN set to a binary it built; without it the binary is built here).

Each test says what it proves; the simulator's request log
(/_sim/requests, its documented admin route) is the witness of what
reached the broker.
"""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.request
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import locator_client  # noqa: E402
from locator_client import (  # noqa: E402
    Client, InputError, LocatorError, NotOpenError, OwnerGoneError, OwnerNotRunning, RefusedError, same_broker, socket_path,
)
from locator_client.errors import error_of  # noqa: E402

ACCOUNT = "LV100001"
ENV: dict = {}
PROCS: list = []
TMP = ""
# The bearer of the follower host desk-py on the owner's TLS port: its
# credential, and the lease's address and pin (set up below).
BEARER: dict = {}
UNTIL = "2099-01-01T00:00:00Z"


def sim_requests() -> list:
    with urllib.request.urlopen(ENV["LOCATOR_BASE_URL"] + "/_sim/requests") as r:
        return json.load(r)


def writes(log: list) -> list:
    """The requests of log that change something at the broker: the owner
    reads the account by itself (at start, when idle) whatever a test
    does, so "nothing was sent" is said of these."""
    return [r for r in log if r["method"] != "GET"]


def count(log: list, method: str, suffix: str) -> int:
    return sum(1 for r in log if r["method"] == method and r["path"].endswith(suffix))


def setUpModule():
    global TMP
    TMP = tempfile.mkdtemp(prefix="lpy")
    bin_ = os.environ.get("LOCATOR_BIN")
    if not bin_:
        bin_ = os.path.join(TMP, "locator")
        root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
        subprocess.run(["go", "build", "-o", bin_, "./cmd/locator"], cwd=root, check=True)
    # The default scenario, and a symbol of its own for each test but the
    # HTBX locate (a symbol's quotes are 30 s apart at the broker).
    scenario = json.loads(subprocess.run([bin_, "sim", "--print-scenario"], capture_output=True, check=True).stdout)
    for sym, price in (("PYQT", "7.00"), ("PYEX", "6.00"), ("PYUP", "5.00"), ("PYCB", "4.00"), ("PYB1", "3.00"),
                       ("PYB2", "3.50"), ("PYTL", "2.00")):
        scenario["pools"].append({"symbol": sym, "locateType": 1, "shares": 100000, "price": 0.02})
        scenario["prices"][sym] = float(price)
    path = os.path.join(TMP, "scenario.json")
    with open(path, "w") as f:
        json.dump(scenario, f)
    sim = subprocess.Popen([bin_, "sim", "--addr", "127.0.0.1:0", "--scenario", path], stdout=subprocess.PIPE, text=True)
    PROCS.append(sim)
    ready = json.loads(sim.stdout.readline())
    key = ready["keys"][0]
    runtime = os.path.join(TMP, "run")
    os.mkdir(runtime, 0o700)
    ENV.update({
        "PATH": os.environ.get("PATH", ""), "HOME": TMP, "PYTHONDONTWRITEBYTECODE": "1", "XDG_CONFIG_HOME": os.path.join(TMP, "config"),
        "XDG_RUNTIME_DIR": runtime, "LOCATOR_BASE_URL": ready["baseURL"], "LOCATOR_ACCOUNT": ACCOUNT,
        "LOCATOR_KEY_ID": key["keyId"], "LOCATOR_SECRET": key["secret"], "LOCATOR_DB": os.path.join(TMP, "locator.db"),
    })
    # A test clock the Go test shares with the simulator (a test aid).
    if os.environ.get("LOCATOR_TEST_CLOCK"):
        ENV["LOCATOR_TEST_CLOCK"] = os.environ["LOCATOR_TEST_CLOCK"]
    # The owner's TLS port admits desk-py's credential as a bearer
    # (docs/library.md, "HTTPS from another host").
    ENV["LOCATOR_OWNER_TOKEN"] = "python-client-test-owner-token-" + os.urandom(16).hex()
    BEARER["token"] = subprocess.run([bin_, "owner-credential", "desk-py", "--until", UNTIL], env=ENV, capture_output=True,
                                     text=True, check=True).stdout.strip()
    followers = os.path.join(TMP, "followers")
    with open(followers, "w") as f:
        f.write("desk-py %s bearer\n" % UNTIL)
    os.chmod(followers, 0o600)
    serve = subprocess.Popen([bin_, "serve", "--listen", "", "--owner-listen", "127.0.0.1", "--owner-followers", followers],
                             env=ENV, stderr=subprocess.PIPE, text=True)
    PROCS.append(serve)
    # The daemon's first line says it owns the account and serves it.
    first = serve.stderr.readline()
    if not first.startswith("serving " + ACCOUNT):
        raise RuntimeError("locator serve: %r" % first)
    threading.Thread(target=serve.stderr.read, daemon=True).start()
    with sqlite3.connect("file:%s?mode=ro" % ENV["LOCATOR_DB"], uri=True) as db:
        BEARER["address"], BEARER["pin"] = db.execute("SELECT address, pin FROM leases WHERE account = ?", (ACCOUNT,)).fetchone()


def tearDownModule():
    for p in reversed(PROCS):
        p.terminate()
        p.wait(timeout=30)
    shutil.rmtree(TMP, ignore_errors=True)


class PackageTest(unittest.TestCase):
    def test_pip_installs_offline(self):
        """pip installs the package from the clone with no network
        (--no-index: its in-tree build backend needs nothing from an index),
        py.typed with it, and the installed copy imports."""
        target = os.path.join(TMP, "site")
        run = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                              "--target", target, os.path.dirname(HERE)], capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertTrue(os.path.exists(os.path.join(target, "locator_client", "py.typed")))
        where = subprocess.run([sys.executable, "-c", "import locator_client; print(locator_client.__file__)"], cwd=TMP,
                               env=dict(os.environ, PYTHONPATH=target), capture_output=True, text=True, timeout=60)
        self.assertEqual(where.stdout.strip(), os.path.join(target, "locator_client", "__init__.py"), where.stderr)


class ClientTest(unittest.TestCase):
    def client(self) -> Client:
        return Client.from_env(ENV)

    def test_credit_back_returns_shares(self):
        """credit_back returns 100 of 200 located shares with one sell at
        the broker, and ends credited."""
        c = self.client()
        self.assertEqual(c.locate("PYCB", 200, max_price=Decimal("0.05")).state, "filled")
        before = sim_requests()
        out = c.credit_back("PYCB", 100, locate_type="Locate")
        self.assertEqual([(o.symbol, o.kind, o.state, o.shares) for o in out], [("PYCB", "credit_back", "credited", 100)])
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/sell"), 1, new)

    def test_locate_under_a_cap_then_status_filled(self):
        """locate HTBX 300 under a cap fills through the owner with one quote
        and one accept at the broker, and status reads it filled."""
        before = sim_requests()
        c = self.client()
        out = c.locate("HTBX", 300, max_price=Decimal("0.05"))
        self.assertEqual(out.state, "filled", out)
        self.assertEqual(out.shares, 300)
        self.assertEqual(out.price_per_share, Decimal("0.015"))
        self.assertTrue(out.id.startswith("wf-"))
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/quote"), 1, new)
        self.assertEqual(count(new, "POST", "/locates/accept"), 1, new)
        st = c.status(out.id)
        self.assertEqual((st.id, st.state, st.shares), (out.id, "filled", 300))

    def test_uncapped_locate_refused_with_nothing_sent(self):
        """a locate with no cap (nobody can answer an offer here) is refused
        before anything is sent: not to the broker, not even to the owner
        (a client of a socket where nothing listens refuses it the same)."""
        before = sim_requests()
        with self.assertRaises(LocatorError) as e:
            self.client().locate("HTBX", 300)
        self.assertEqual(e.exception.kind, "input")
        self.assertIn("nothing was sent", str(e.exception))
        nowhere = Client.from_env(ENV, endpoint=os.path.join(TMP, "nobody.sock"))
        with self.assertRaises(LocatorError) as e:
            nowhere.locate("HTBX", 300)
        self.assertEqual(e.exception.kind, "input")
        self.assertEqual(writes(sim_requests()), writes(before))

    def test_short_guarded_by_the_owner(self):
        """the owner's fat-finger guard holds for Python too (the
        reference price): a short of PYQT, which the account neither holds nor filled
        today, is refused with no reference price, and with ref_price 7.00
        a limit of 0.70 is refused against it; nothing is sent either
        time."""
        before = sim_requests()
        with self.assertRaises(LocatorError) as e:
            self.client().short("PYQT", 100, "0.70", max_price="0.05")
        self.assertEqual(e.exception.kind, "input")
        self.assertIn("knows no price of PYQT", str(e.exception))
        with self.assertRaises(LocatorError) as e:
            self.client().short("PYQT", 100, "0.70", max_price="0.05", ref_price="7.00")
        self.assertEqual(e.exception.kind, "input")
        self.assertIn("from PYQT's reference price 7.00 (the reference price given)", str(e.exception))
        new = sim_requests()[len(before):]
        self.assertEqual(writes(new), [], new)

    def test_no_owner_is_a_clear_error(self):
        """with no owner running for the account, the client says so and
        sends nothing."""
        other = dict(ENV, LOCATOR_ACCOUNT="LV100002")
        before = sim_requests()
        with self.assertRaises(OwnerNotRunning) as e:
            Client.from_env(other).quote(["HTBX"])
        self.assertIsInstance(e.exception, OwnerGoneError)
        self.assertIn("no owner", str(e.exception))
        self.assertEqual(writes(sim_requests()), writes(before))

    def test_another_key_pair_refused(self):
        """a process that does not hold the account's key pair (another
        secret) earns no session: refused, and nothing reaches the broker."""
        before = sim_requests()
        with self.assertRaises(LocatorError) as e:
            Client.from_env(dict(ENV, LOCATOR_SECRET="not-the-secret")).quote(["HTBX"])
        self.assertIsInstance(e.exception, RefusedError)
        self.assertEqual(e.exception.kind, "refused")
        self.assertIn("key pair", str(e.exception))
        self.assertEqual(writes(sim_requests()), writes(before))

    def test_quote_takes_nothing(self):
        """quote prices a symbol with one quote and its cancel, and no
        accept."""
        before = sim_requests()
        rows = self.client().quote(["PYQT"], shares=200)
        self.assertEqual([(r.symbol, r.state, r.price_per_share, r.locate_type) for r in rows], [("PYQT", "priced", Decimal("0.02"), "Locate")])
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/quote"), 1, new)
        self.assertEqual(sum(1 for r in new if r["method"] == "DELETE" and "/locates/cancel/" in r["path"]), 1, new)
        self.assertEqual(count(new, "POST", "/locates/accept"), 0, new)

    def test_example_ensure_located_then_short(self):
        """the example a helper copies locates PYEX under its cap and sells
        short with one order at the broker."""
        before = sim_requests()
        run = subprocess.run([sys.executable, os.path.join(os.path.dirname(HERE), "examples", "ensure_located_then_short.py"),
                              "PYEX", "400", "6.00", "0.05"], env=dict(ENV, PYTHONPATH=os.path.dirname(HERE)),
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("filled, 400 shares at 0.02", run.stdout)
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/accept"), 1, new)
        self.assertEqual(sum(1 for r in new if r["method"] == "POST" and r["path"].endswith("/order")), 1, new)

    def test_updates_iterate_the_accounts_changes(self):
        """the iterator of updates, open before a locate is sent, delivers
        its changes to its end."""
        c = self.client()
        states = []
        with c.updates() as updates:
            done = threading.Event()

            def read():
                for u in updates:
                    if u.workflow and u.workflow.symbol == "PYUP":
                        states.append(u.workflow.state)
                        if u.workflow.finished:
                            done.set()
                            return

            threading.Thread(target=read, daemon=True).start()
            out = c.locate("PYUP", 300, max_price=Decimal("0.05"))
            self.assertTrue(done.wait(30), states)
        self.assertEqual(out.state, "filled")
        self.assertEqual(states[-1], "filled")
        self.assertIn("offered", states)

    def test_quote_says_why_it_priced_nothing(self):
        """quote("ZZZZ"), a symbol the broker holds none of, ends rejected
        with no price and the broker's reason (spec "Errors", locate error
        11), one quote sent and nothing accepted."""
        before = sim_requests()
        [row] = self.client().quote("ZZZZ")
        self.assertEqual((row.symbol, row.state, row.price_per_share), ("ZZZZ", "rejected", None))
        self.assertIn("No shares available", row.reason)
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/quote"), 1, new)
        self.assertEqual(count(new, "POST", "/locates/accept"), 0, new)

    def test_locate_all_is_one_batch(self):
        """locate_all places PYB1 100 and PYB2 200 in one LocateRequest
        under one cap; both fill, a quote and an accept each at the broker
        (spec "Short locates"), outcomes in the items' order."""
        before = sim_requests()
        out = self.client().locate_all([("pyb1", 100), ("PYB2", 200)], max_price="0.05")
        self.assertEqual([(o.symbol, o.state, o.shares) for o in out], [("PYB1", "filled", 100), ("PYB2", "filled", 200)])
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/quote"), 2, new)
        self.assertEqual(count(new, "POST", "/locates/accept"), 2, new)

    def test_request_carries_any_route(self):
        """request carries a route the client does not wrap on the earned
        session: /v1/status answers the account; a path the API does not
        hold answers 404 with an Error; an unknown workflow's follow is
        NotOpenError."""
        c = self.client()
        status, headers, body = c.request("POST", "/v1/status", {})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["account"], ACCOUNT)
        status, _, body = c.request("GET", "/v1/no-such-route")
        self.assertEqual(status, 404, body)
        self.assertEqual(json.loads(body)["kind"], "input")
        with self.assertRaises(NotOpenError) as e:
            c.follow("wf-no-such-workflow")
        self.assertEqual(e.exception.kind, "not_open")


class InputTest(unittest.TestCase):
    """Every bad argument is an InputError raised before anything is sent:
    the client below points at a socket where nobody listens, so anything
    sent would be OwnerNotRunning instead, and the broker's log stays the
    same."""

    def test_bad_arguments(self):
        c = Client.from_env(ENV, endpoint=os.path.join(TMP, "nobody.sock"))
        cases = {
            "money not a decimal string": lambda: c.locate("HTBX", 300, max_price="abc"),
            "money a float": lambda: c.locate("HTBX", 300, max_price=0.05),
            "money NaN": lambda: c.locate("HTBX", 300, max_cost="NaN"),
            "money negative": lambda: c.locate("HTBX", 300, max_price="-0.01"),
            "no cap": lambda: c.locate("HTBX", 300),
            "shares not a lot": lambda: c.locate("HTBX", 150, max_price="0.05"),
            "shares zero": lambda: c.quote("HTBX", shares=0),
            "shares a bool": lambda: c.locate("HTBX", True, max_price="0.05"),
            "shares a string": lambda: c.locate("HTBX", "300", max_price="0.05"),
            "shares past the broker's bound": lambda: c.locate("HTBX", 2147483700, max_price="0.05"),
            "empty symbol": lambda: c.locate("", 300, max_price="0.05"),
            "symbol with a space": lambda: c.quote(["HT BX"]),
            "symbol not a string": lambda: c.quote([5]),
            "no symbols": lambda: c.quote([]),
            "empty batch": lambda: c.locate_all([], max_price="0.05"),
            "batch item not a pair": lambda: c.locate_all([("HTBX",)], max_price="0.05"),
            "credit-back not a lot": lambda: c.credit_back("HTBX", 50),
            "short limit not money": lambda: c.short("HTBX", 100, "abc", max_price="0.05"),
            "short limit zero": lambda: c.short("HTBX", 100, "0", max_price="0.05"),
            "short ref_price a float": lambda: c.short("HTBX", 100, "12.40", max_price="0.05", ref_price=12.4),
            "empty id": lambda: c.status(""),
            "unknown method": lambda: c.request("BREW", "/v1/status"),
            "path outside the API": lambda: c.request("GET", "v1/status"),
            "env neither live nor paper": lambda: Client.from_env(dict(ENV, LOCATOR_ENV="prod")),
            "bearer without a pin": lambda: Client(account=ACCOUNT, address="https://127.0.0.1:1", pin="", token="t"),
            "bearer over http": lambda: Client(account=ACCOUNT, address="http://127.0.0.1:1", pin="0" * 64, token="t"),
        }
        before = sim_requests()
        for what, call in cases.items():
            with self.subTest(what):
                with self.assertRaises(InputError) as e:
                    call()
                self.assertEqual(e.exception.kind, "input")
        self.assertEqual(writes(sim_requests()), writes(before))

    def test_a_class_per_kind(self):
        """each kind of the API's Error is its class under LocatorError, and
        a kind a newer owner adds is still a LocatorError of that kind."""
        kinds = ["input", "refused", "not_open", "sizing", "changed", "used", "owner_gone", "failed"]
        classes = set()
        for kind in kinds:
            e = error_of(kind, "m")
            self.assertEqual((e.kind, str(e)), (kind, "m"))
            self.assertIsInstance(e, LocatorError)
            self.assertIsNot(type(e), LocatorError)
            classes.add(type(e))
        self.assertEqual(len(classes), len(kinds))
        self.assertEqual(type(error_of("new_kind", "m")), LocatorError)
        for name in ("OwnerNotRunning", "TransportError"):
            self.assertTrue(issubclass(getattr(locator_client, name), OwnerGoneError), name)


class FindingTest(unittest.TestCase):
    """The owner's socket found whatever the spelling of the broker's
    address (api/README.md, "Finding the owner")."""

    def test_the_socket_locator_names(self):
        """the socket `locator serve` made is the one socket_path names for
        the address as spelled, trailing slashes trimmed (service.name);
        localhost's spelling names another, which the client does not
        need: it finds the owner by its hello."""
        url = ENV["LOCATOR_BASE_URL"]
        directory = os.path.join(ENV["XDG_RUNTIME_DIR"], "locator")
        self.assertTrue(os.path.exists(socket_path(directory, ACCOUNT, url)))
        self.assertEqual(socket_path(directory, ACCOUNT, url + "//"), socket_path(directory, ACCOUNT, url))
        self.assertFalse(os.path.exists(socket_path(directory, ACCOUNT, url.replace("127.0.0.1", "localhost"))))

    def test_every_spelling_reaches_the_owner(self):
        """localhost for 127.0.0.1, a trailing slash, upper case: each
        reaches the owner and earns a session."""
        url = ENV["LOCATOR_BASE_URL"]
        for spelling in (url.replace("127.0.0.1", "localhost"), url + "/", url.upper().replace("HTTP", "http", 1)):
            with self.subTest(spelling):
                status, _, body = Client.from_env(dict(ENV, LOCATOR_BASE_URL=spelling)).request("POST", "/v1/status", {})
                self.assertEqual(status, 200, body)

    def test_a_socket_named_with_a_suffix(self):
        """an owner's socket named with a suffix (a Postgres owner adds its
        pid) is found: here a runtime folder holding only such a name for
        the serve's socket."""
        url = ENV["LOCATOR_BASE_URL"]
        runtime = tempfile.mkdtemp(prefix="lpyrun", dir=TMP)
        os.mkdir(os.path.join(runtime, "locator"), 0o700)
        named = socket_path(os.path.join(ENV["XDG_RUNTIME_DIR"], "locator"), ACCOUNT, url)
        os.symlink(named, named.replace(ENV["XDG_RUNTIME_DIR"], runtime)[:-len(".sock")] + "-3039.sock")
        status, _, body = Client.from_env(dict(ENV, XDG_RUNTIME_DIR=runtime)).request("POST", "/v1/status", {})
        self.assertEqual(status, 200, body)

    def test_same_broker(self):
        """the rule behind it: loopback however named, the default port
        written or not, trailing slashes and case; another port, scheme or
        host is another broker."""
        same = [("http://127.0.0.1:80/", "http://localhost"), ("https://Broker.example:443", "https://broker.example/"),
                ("http://[::1]:8080", "http://127.0.0.1:8080")]
        for a, b in same:
            self.assertTrue(same_broker(a, b), (a, b))
        for a, b in [("http://127.0.0.1:8080", "http://127.0.0.1:8081"), ("https://broker.example", "http://broker.example"),
                     ("https://broker.example", "https://other.example")]:
            self.assertFalse(same_broker(a, b), (a, b))


class BearerTest(unittest.TestCase):
    """The owner's TLS port with a bearer credential (docs/library.md,
    "HTTPS from another host"): the address and pin the lease holds, the
    account as SNI, desk-py's credential."""

    def bearer(self, **kw: str) -> Client:
        return Client(account=ACCOUNT, **dict(BEARER, **kw))

    def test_locate_through_the_bearer_door(self):
        """a capped locate of PYTL 100 fills through the TLS port, with one
        quote and one accept at the broker (spec "Short locates")."""
        before = sim_requests()
        out = self.bearer().locate("PYTL", 100, max_price=Decimal("0.05"))
        self.assertEqual((out.symbol, out.state, out.shares), ("PYTL", "filled", 100))
        new = sim_requests()[len(before):]
        self.assertEqual(count(new, "POST", "/locates/quote"), 1, new)
        self.assertEqual(count(new, "POST", "/locates/accept"), 1, new)

    def test_another_certificate_is_refused(self):
        """a pin that is not the certificate's is refused before anything
        is sent, as is a credential the followers file does not admit; the
        credential is never in the error."""
        pin = BEARER["pin"]
        other = ("0" if pin[0] != "0" else "1") + pin[1:]
        before = sim_requests()
        with self.assertRaises(RefusedError) as e:
            self.bearer(pin=other).locate("PYTL", 100, max_price="0.05")
        self.assertIn("not the owner's", str(e.exception))
        with self.assertRaises(RefusedError) as e:
            self.bearer(token=BEARER["token"][:-4] + "AAAA").locate("PYTL", 100, max_price="0.05")
        self.assertIn("not the credential of a follower host admitted as a bearer", str(e.exception))
        self.assertNotIn(BEARER["token"][:-4], str(e.exception))
        self.assertEqual(writes(sim_requests()), writes(before))


def library_blocks(lang: str) -> list:
    """The code blocks of docs/library.md's Python section in lang."""
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "docs", "library.md")) as f:
        page = f.read()
    section = page.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return [b.split("```", 1)[0] for b in section.split("```" + lang + "\n")[1:]]


class DocsTest(unittest.TestCase):
    """docs/library.md's Python section, run as a reader from a fresh clone
    runs it (PYTHONPATH=clients/python)."""

    def run_block(self, code: str, env: dict) -> list:
        run = subprocess.run([sys.executable, "-c", code], env=dict(env, PYTHONPATH=os.path.dirname(HERE)),
                             capture_output=True, text=True, timeout=120)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        return run.stdout.split()

    def test_the_socket_example(self):
        """the first block locates HTBX 300 under its cap and sells it short
        with one order, working or filled."""
        words = self.run_block(library_blocks("python")[0], ENV)
        self.assertIn(words[0], ("filled", "covered"), words)
        self.assertIn(words[-1], ("working", "filled"), words)

    def test_the_bearer_example(self):
        """the second block locates HTBX 300 through the TLS port as
        desk-py's bearer, with the lease's address and pin."""
        env = dict(ENV, OWNER_ADDRESS=BEARER["address"], OWNER_PIN=BEARER["pin"], LOCATOR_OWNER_TOKEN=BEARER["token"])
        words = self.run_block(library_blocks("python")[1], env)
        self.assertIn(words[0], ("filled", "covered"), words)


if __name__ == "__main__":
    unittest.main()
