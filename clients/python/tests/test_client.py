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
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.request
from decimal import Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from locator_client import Client, LocatorError, OwnerNotRunning  # noqa: E402

ACCOUNT = "LV100001"
ENV: dict = {}
PROCS: list = []
TMP = ""


def sim_requests() -> list:
    with urllib.request.urlopen(ENV["LOCATOR_BASE_URL"] + "/_sim/requests") as r:
        return json.load(r)


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
    for sym, price in (("PYQT", "7.00"), ("PYEX", "6.00"), ("PYUP", "5.00"), ("PYCB", "4.00")):
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
    serve = subprocess.Popen([bin_, "serve", "--listen", ""], env=ENV, stderr=subprocess.PIPE, text=True)
    PROCS.append(serve)
    # The daemon's first line says it owns the account and serves it.
    first = serve.stderr.readline()
    if not first.startswith("serving " + ACCOUNT):
        raise RuntimeError("locator serve: %r" % first)
    threading.Thread(target=serve.stderr.read, daemon=True).start()


def tearDownModule():
    for p in reversed(PROCS):
        p.terminate()
        p.wait(timeout=30)
    shutil.rmtree(TMP, ignore_errors=True)


class PackageTest(unittest.TestCase):
    def test_pip_installs_offline(self):
        """pip installs the package from the clone with no network
        (--no-index; --no-build-isolation builds it with the setuptools and
        wheel the system holds, Debian's python3-setuptools), py.typed
        with it, and the installed copy imports."""
        target = os.path.join(TMP, "site")
        run = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-build-isolation",
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
        self.assertEqual(sim_requests(), before)

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
        self.assertEqual([r for r in new if r["method"] != "GET"], [], new)

    def test_no_owner_is_a_clear_error(self):
        """with no owner running for the account, the client says so and
        sends nothing."""
        other = dict(ENV, LOCATOR_ACCOUNT="LV100002")
        before = sim_requests()
        with self.assertRaises(OwnerNotRunning) as e:
            Client.from_env(other).quote(["HTBX"])
        self.assertIn("no owner", str(e.exception))
        self.assertEqual(sim_requests(), before)

    def test_another_key_pair_refused(self):
        """a process that does not hold the account's key pair (another
        secret) earns no session: refused, and nothing reaches the broker."""
        before = sim_requests()
        with self.assertRaises(LocatorError) as e:
            Client.from_env(dict(ENV, LOCATOR_SECRET="not-the-secret")).quote(["HTBX"])
        self.assertEqual(e.exception.kind, "refused")
        self.assertIn("key pair", str(e.exception))
        self.assertEqual(sim_requests(), before)

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


if __name__ == "__main__":
    unittest.main()
