"""A parlour of 40 tables fed through the dashboard's model on a clock the
test moves (no broker, no firmware): the messages 40 tables would send
over a morning, some of them faulted, some offline, some idle, the others
in play, with what the page must show of each. The browser tests of the
owner's view render it (host_tools/tests/test_owner_view.py).

    scene = Scene(store)                # a Dashboard fed the morning
    scene.expected["t7"]                # what t7's tile and figures must say
"""

import json
import time

from host_tools.fleet.page import Dashboard

SITE = "hall"
TABLES = ["t%d" % k for k in range(1, 41)]
# 2026-12-05 09:00 local: one day from the start to the end of the scene.
START = time.mktime((2026, 12, 5, 9, 0, 0, 0, 0, -1))
DAY = "2026-12-05"
# The tables that need the owner, and how long since each began (s).
FAULTED = {"t7": (10, {"lane": 1}, 12 * 60), "t19": (30, {"side": 2, "ms": 200}, 3 * 60 + 20),
           "t33": (11, None, 45)}
OFFLINE = {"t5": ("will", 20 * 60), "t26": ("silent", 2 * 3600 + 14 * 60)}
IDLE = ["t3", "t12", "t31", "t35", "t40"]
HOURS_S = 3 * 3600         # the scene ends three hours after START
HEALTH_S = 10              # each table's health, this often


class Clock:
    def __init__(self):
        self.mono = 1000.0

    def __call__(self):
        return self.mono

    def wall(self):
        return START + self.mono - 1000.0


class Scene:
    def __init__(self, store=None):
        self.clock = Clock()
        self.dash = Dashboard(0, ("dashboard", "-"), expect=[(SITE, tid) for tid in TABLES],
                              store=store, clock=self.clock, wall=self.clock.wall)
        self.dash.model.broker = True
        self.counters = {tid: {"cycles": 50 + k, "hands": 100 + k, "lifts": 50 + k,
                               "tiles_fed": [34] * 4, "faults": [[10, 1]]}
                         for k, tid in enumerate(TABLES)}
        self.expected = {tid: {"hands": 0, "faults": 0} for tid in TABLES}
        self.gone = set()          # the tables that went offline
        self.next_health = HEALTH_S
        self.morning()

    def send(self, tid, leaf, data):
        payload = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.dash.feed("parlour/%s/table/%s/%s" % (SITE, tid, leaf), payload)

    def at(self, seconds):
        """The clock to START + seconds, never back."""
        assert 1000.0 + seconds >= self.clock.mono, seconds
        self.clock.mono = 1000.0 + seconds

    def ms(self):
        return int((self.clock.mono - 1000.0) * 1000)

    def health(self, tid):
        self.send(tid, "health", {"uptime": self.ms(), "heap_free": 9000, "boots": 1})

    def count(self, tid, hands=0, faults=0):
        """The table's counters after `hands` more hands and `faults` more faults."""
        c = self.counters[tid]
        c["hands"] += hands
        c["faults"] = [[10, c["faults"][0][1] + faults]]
        self.expected[tid]["hands"] += hands
        self.expected[tid]["faults"] += faults
        self.send(tid, "counters", dict(c))

    def morning(self):
        self.at(0)
        for tid in TABLES:
            self.send(tid, "online", b"true")
            self.send(tid, "build", {"fw": "0.1.0", "build": "image-1"})
            self.send(tid, "counters", dict(self.counters[tid]))
            self.send(tid, "state", {"state": "idle", "fault": None, "t": self.ms()})
        self.until(60)
        for tid in TABLES:
            if tid not in IDLE:
                self.send(tid, "state", {"state": "in_hand", "fault": None, "t": self.ms()})
        self.until(1800)
        for k, tid in enumerate(TABLES):
            self.count(tid, hands=3 + k % 4)
            if tid in IDLE:
                self.send(tid, "hand", {"winner": 1, "draw": False, "dealer": k % 4, "wins_in_row": 1,
                                        "streak": 0, "hands": self.counters[tid]["hands"], "t": self.ms()})
        self.stops()
        self.until(HOURS_S)

    def until(self, seconds):
        """Every table that speaks sends its health every HEALTH_S up to
        START + seconds, as a table does (a table silent longer is offline)."""
        while self.next_health < seconds:
            self.at(self.next_health)
            for tid in TABLES:
                if tid not in self.gone:
                    self.health(tid)
            self.next_health += HEALTH_S
        self.at(seconds)

    def stops(self):
        """The faults and the tables that went offline, each at its time."""
        events = sorted([(HOURS_S - ago, "fault", tid) for tid, (_, _, ago) in FAULTED.items()] +
                        [(HOURS_S - ago, "offline", tid) for tid, (_, ago) in OFFLINE.items()])
        for when, what, tid in events:
            self.until(when)
            if what == "offline":
                self.health(tid)
                self.gone.add(tid)
                if OFFLINE[tid][0] == "will":
                    self.send(tid, "online", b"false")
                continue          # silent: this health is the last it sends
            code, detail, _ = FAULTED[tid]
            self.send(tid, "state", {"state": "fault", "fault": code, "t": self.ms()})
            self.send(tid, "fault", {"code": code, "name": "x", "detail": detail, "t": self.ms()})
            self.count(tid, faults=1)

    def in_play_s(self, tid):
        """The wall time the scene keeps `tid` in play."""
        if tid in IDLE:
            return 0
        if tid in FAULTED:
            return HOURS_S - FAULTED[tid][2] - 60
        if tid in OFFLINE:
            return HOURS_S - OFFLINE[tid][1] - 60
        return HOURS_S - 60
