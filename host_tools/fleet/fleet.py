"""A parlour of virtual tables (docs/fleet.md, make fleet): the project's
broker, N tables each in its own process (host_tools/parlour/table.py: its
firmware on the twin, its players, its faults and technician), each with
its own table id and broker user, and the dashboard with the page.

    with Fleet(tables=12, speed=2.0) as fleet:
        print(fleet.page.url)
        fleet.inject("t3", "lane_jam:1")

`python -m host_tools.fleet` runs one until Ctrl-C (what `make fleet`
runs); `Fleet.run_for(S)` runs its tables S virtual seconds as fast as
they go and returns the view (`mjctl --sim --tables N fleet --seconds S
--json`).
"""

import json
import os
import queue
import secrets
import signal
import subprocess
import sys
import threading
import time

from host_tools.fleet import broker as broker_mod
from host_tools.fleet.broker import Broker, table_user
from host_tools.fleet.days import Store
from host_tools.fleet.page import Dashboard, PageServer
from host_tools.image.mpenv import ROOT

SITE = "hall"
CONNECTION = ROOT / "build" / "fleet" / "dashboard.json"   # for `mjctl fleet`, while it runs
STORE = ROOT / "build" / "fleet" / "days.sqlite"          # the day's figures, kept between runs
MJCTL_SCREEN = "mjctl"     # its screen: its own read-only user, dashboard-mjctl


class FleetError(Exception):
    pass


class Fleet:
    def __init__(self, tables=12, speed=2.0, fault_rate=0.1, fix_after=20.0, seed=1, site=SITE,
                 http_port=0, seconds=None, page=True, stale_s=None, log=None, on_fault=None,
                 store=None):
        """speed: virtual seconds per wall second of every table (each
        keeps its own clock); 0: as fast as they go. seconds: each table's
        clock stops at S (run_for). log: a function of one line. store:
        the SQLite file of the day's figures (days.py), or None."""
        if tables < 1:
            raise FleetError("a fleet needs at least one table")
        self.ids = ["t%d" % (k + 1) for k in range(tables)]
        self.site = site
        self.speed = speed
        self.fault_rate = fault_rate
        self.fix_after = fix_after
        self.seed = seed
        self.http_port = http_port
        self.seconds = seconds
        self.want_page = page
        self.stale_s = stale_s
        self.log = log or (lambda line: None)
        self.on_fault = on_fault
        self.store_path = store
        self.passwords = {tid: secrets.token_hex(8) for tid in self.ids}
        self.broker = None
        self.dashboard = None
        self.page = None
        self.procs = {}
        self.events = queue.Queue()        # (table id, the table's JSON line)
        self.ready = set()
        self.reached = set()
        self.stopped = {}                  # table id -> why its process ended
        self.faults = []                   # (table id, code, table ms, monotonic) from the tables
        self._lock = threading.Lock()

    # -- start, stop ------------------------------------------------------------------

    def start(self):
        # `mjctl fleet` is a screen of its own: with the page's user it
        # would take the page's connection (the broker binds a connection
        # to its user).
        self.broker = Broker(tables=[(self.site, tid, self.passwords[tid]) for tid in self.ids],
                             screens=[MJCTL_SCREEN])
        self.broker.start()
        store = None if self.store_path is None else Store(self.store_path)
        self.dashboard = Dashboard(self.broker.port, self.broker.dashboard,
                                   expect=[(self.site, tid) for tid in self.ids],
                                   stale_s=self.stale_s, on_fault=self.on_fault,
                                   store=store).start()
        if self.want_page:
            self.page = PageServer(self.dashboard, self._http_port()).start()
        for k, tid in enumerate(self.ids):
            self._spawn(k, tid)
        return self

    def _http_port(self):
        """The port asked for, or any free one when it is taken."""
        import socket
        if not self.http_port:
            return 0
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", self.http_port))
            except OSError:
                self.log("port %d is taken: the page takes another" % self.http_port)
                return 0
        return self.http_port

    def _spawn(self, k, tid):
        conf = {"host": "127.0.0.1", "port": self.broker.port, "site": self.site, "table": tid,
                "user": table_user(self.site, tid), "password": self.passwords[tid],
                "seed": self.seed + k, "speed": self.speed, "fault_rate": self.fault_rate,
                "fix_after": self.fix_after}
        cmd = [sys.executable, "-m", "host_tools.parlour.table", "--conf", "-"]
        if self.seconds is not None:
            cmd += ["--seconds", repr(float(self.seconds))]
        # The settings on stdin's first line, not the command line: a
        # password in argv is visible to every user of the machine.
        proc = subprocess.Popen(cmd, cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, bufsize=1)
        proc.stdin.write(json.dumps(conf) + "\n")
        proc.stdin.flush()
        self.procs[tid] = proc
        threading.Thread(target=self._read, args=(tid, proc), name="fleet-" + tid,
                         daemon=True).start()

    def _read(self, tid, proc):
        for line in proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                if ev.get("ev") == "ready":
                    self.ready.add(tid)
                elif ev.get("ev") == "reached":
                    self.reached.add(tid)
                elif ev.get("ev") == "fault":
                    self.faults.append((tid, ev["code"], ev["t"], ev["wall"]))
                elif ev.get("ev") == "stopped":
                    self.stopped[tid] = ev.get("reason")
            self.events.put((tid, ev))
        with self._lock:
            self.stopped.setdefault(tid, "exit %s" % proc.wait())
        self.events.put((tid, {"ev": "exit"}))

    def inject(self, tid, kind):
        """A fault injected into table `tid`'s virtual table now."""
        proc = self.procs[tid]
        proc.stdin.write("fault %s\n" % kind)
        proc.stdin.flush()

    def stop(self):
        for proc in self.procs.values():
            try:
                proc.send_signal(signal.SIGCONT)      # a paused table hears its quit
                proc.stdin.write("quit\n")
                proc.stdin.close()
            except (OSError, ValueError):
                pass
        end = time.monotonic() + 15
        for proc in self.procs.values():
            try:
                proc.wait(max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()            # its firmware ends when its bus closes
                proc.wait()
        if self.page is not None:
            self.page.stop()
        if self.dashboard is not None:
            self.dashboard.stop()
        if self.broker is not None:
            self.broker.stop()
        try:
            CONNECTION.unlink()
        except OSError:
            pass

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()

    def write_connection(self):
        """The broker's address and `mjctl fleet`'s read-only user
        (build/fleet/dashboard.json, this user's only)."""
        CONNECTION.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(str(CONNECTION), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        user, password = self.broker.screens[MJCTL_SCREEN]
        with os.fdopen(fd, "w") as f:
            json.dump({"host": "127.0.0.1", "port": self.broker.port,
                       "user": user, "password": password,
                       "site": self.site, "tables": self.ids,
                       "store": None if self.store_path is None else str(self.store_path),
                       "url": self.page.url if self.page else None}, f)

    # -- a run of S virtual seconds ---------------------------------------------------------

    def run_for(self, timeout):
        """Waits until every table's clock has reached `seconds` (it stops
        there, its connection open), then until the broker has nothing
        more to give; returns the summary of `mjctl fleet --json`."""
        end = time.monotonic() + timeout
        while True:
            with self._lock:
                done = len(self.reached) == len(self.ids)
                dead = dict(self.stopped)
            if done:
                break
            if dead:
                raise FleetError("a table stopped: %s" % dead)
            if time.monotonic() > end:
                raise FleetError("the tables did not reach %s s in %.0f s of wall time (%d did)"
                                 % (self.seconds, timeout, len(self.reached)))
            time.sleep(0.05)           # waiting on other processes, in real time
        # Every clock is stopped: messages still coming are the last queued.
        last, quiet_since = -1, time.monotonic()
        while time.monotonic() - quiet_since < 0.5:
            n = self.dashboard.snapshot()["messages"]
            if n != last:
                last, quiet_since = n, time.monotonic()
            time.sleep(0.05)
        return self.summary()

    def summary(self):
        snap = self.dashboard.snapshot()
        return {"broker": {"version": broker_mod.version(), "port": self.broker.port},
                "seconds": self.seconds, "messages": snap["messages"],
                "tables": [{"id": tb["id"], "online": tb["online"], "state": tb["state"],
                            "hands": tb["hands"] or 0, "faults": tb["faults_seen"],
                            "fault": tb["fault"]["code"] if tb["fault"] else None,
                            "messages": tb["messages"], "counters": tb["counters"]}
                           for tb in snap["tables"]]}
