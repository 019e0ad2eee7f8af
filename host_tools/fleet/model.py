"""What the parlour's dashboard knows of every table: the topics of
docs/fleet.md folded into one view, for the page (host_tools/fleet/page.py)
and `mjctl fleet` alike. Plain data, no I/O: `feed` a message with the
time it arrived, `snapshot` at a time.

Offline (docs/fleet.md, Offline within 10 s): a table is offline when its
`online` says false (its last-will, or the broker's), or when nothing has
come from it for `stale_after` seconds: STALE_S, or 1.5 times the wall
time its health takes to come again when that is longer (a virtual table
whose clock the machine slows down; a real table's 5 s gives 7.5 s), so that a
table that only publishes its health is never called offline between two
of them. That interval is the longer of the last one seen and HEALTH_MS
of the table's clock at its pace, the table's time (the `t` and `uptime`
of its messages) against the wall clock over the last PACE_S seconds.
Until a table has shown its pace, it has BOOT_STALE_S.

Every payload is checked where it comes in (payload.py): a message that is
not a table's topic, not JSON or not an object is refused (`bad`); a field
of the wrong kind is dropped (`dropped`) and the message's other fields
kept. The view holds only the kinds the page and `mjctl fleet` expect.
"""

import json
import re
import time

from host_tools.fleet.payload import SCHEMAS, clean

STALE_S = 8.0            # seconds without a message: offline (health every 5 s of the table's time)
STALE_HEALTH = 1.5       # ... or this many health intervals, when longer
HEALTH_MS = 5000         # a table's health and counters, every this much of its clock
                         # (the firmware's _HEALTH_MS, firmware/link/telemetry.py; a test checks)
PACE_S = 60.0            # the table's pace: its clock against the wall over this long
PACE_MIN_S = 1.0         # ... measured over at least this long
BOOT_STALE_S = 30.0      # a table's timeout until its pace is known: a fleet's start is the machine's busiest
HISTORY = 200            # faults kept in the history, the newest
IN_USE = ("building", "lifting", "dealer", "rolling", "in_hand")   # a table in use
NAME = re.compile(r"[A-Za-z0-9_-]{1,32}\Z")   # a site's or a table's, as mqttconf.py checks them


def natural(key):
    """t2 before t10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key)]


class TableView:
    def __init__(self, site, tid):
        self.site = site
        self.id = tid
        self.online = None         # the `online` topic: True, False, None (not seen)
        self.last_rx = None        # monotonic seconds of its last message
        self.health_rx = []        # the last two health messages' arrivals
        self.clock = []            # (arrival, table ms) of its timestamped messages, PACE_S
        self.state = None
        self.state_rx = None
        self.fault = None          # the active fault: {code, name, cause, fix, detail, t, since}
        self.dealer = None
        self.last_hand = None
        self.counters = None
        self.health = None
        self.build = None
        self.messages = 0
        self.bad = 0               # its messages refused whole
        self.dropped = 0           # its fields of the wrong kind, dropped
        self.faults_seen = {}      # code -> fault messages seen
        self.day = None            # the local date hands_base and in_use_s count from
        self.hands_base = None
        self.hands = None
        self.in_use_s = 0.0


class FleetModel:
    def __init__(self, expect=(), site=None, stale_s=STALE_S, clock=time.monotonic, wall=time.time):
        """expect: (site, id) of the tables the parlour has: shown offline
        until they speak. clock: monotonic seconds; wall: epoch seconds."""
        self.tables = {}
        self.history = []          # newest last
        self.messages = 0
        self.bad = 0               # messages refused whole: not a table's topic, not JSON, not an object
        self.dropped = 0           # fields of the wrong kind, dropped from messages otherwise taken
        self.broker = False        # the dashboard's connection to the broker is up
        self.bridges = {}          # site -> its bridge is up (a chain's head office)
        self.stale_s = stale_s
        self.clock = clock
        self.wall = wall
        self.site = site
        self.started = wall()
        for s, tid in expect:
            self._table(s, tid)

    def _table(self, site, tid):
        key = (site, tid)
        tv = self.tables.get(key)
        if tv is None:
            tv = self.tables[key] = TableView(site, tid)
        return tv

    # -- a message ----------------------------------------------------------------

    def feed(self, topic, payload, now=None):
        """One message as the broker gave it; True when it changed the view."""
        now = self.clock() if now is None else now
        parts = topic.split("/")
        if len(parts) == 3 and parts[0] == "parlour" and parts[2] == "bridge" and \
                NAME.match(parts[1]) and payload in (b"0", b"1"):
            # A parlour's bridge to this broker (docs/fleet.md, A chain of
            # parlours): "0", its tables are out of sight, not offline.
            self.messages += 1
            self.bridges[parts[1]] = payload == b"1"
            return True
        if len(parts) != 5 or parts[0] != "parlour" or parts[2] != "table" or \
                not NAME.match(parts[1]) or not NAME.match(parts[3]):
            self.bad += 1
            return False
        tv = self._table(parts[1], parts[3])
        leaf = parts[4]
        self.messages += 1
        tv.messages += 1
        self._roll(tv, now)
        if leaf == "online":
            if payload not in (b"true", b"false"):
                return self._refused(tv)
            tv.online = payload == b"true"
            tv.last_rx = now
            return True
        try:
            data = json.loads(payload)
        except (ValueError, RecursionError):    # not JSON, or nested deeper than Python parses
            return self._refused(tv)
        if type(data) is not dict:
            return self._refused(tv)
        tv.last_rx = now
        if tv.online is None:
            tv.online = True       # it speaks: its retained `online` may come later
        data, dropped = clean(leaf, data)
        self.dropped += dropped
        tv.dropped += dropped
        self._clock(tv, data.get("uptime", data.get("t")), now)
        if leaf in SCHEMAS:        # a payload's leaf only: a topic never names another method
            getattr(self, "_" + leaf)(tv, data, now)
        return True

    def _refused(self, tv):
        self.bad += 1
        tv.bad += 1
        return False

    def _clock(self, tv, ms, now):
        if type(ms) is not int:
            return
        if tv.clock and ms < tv.clock[-1][1]:
            tv.clock = []          # it started again: a new clock
        tv.clock.append((now, ms))
        while len(tv.clock) > 2 and now - tv.clock[1][0] > PACE_S:
            tv.clock.pop(0)

    def pace(self, tv):
        """The table's clock against the wall (1.0: real time), or None."""
        c = tv.clock
        if len(c) < 2 or c[-1][0] - c[0][0] < PACE_MIN_S:
            return None
        return (c[-1][1] - c[0][1]) / 1000.0 / (c[-1][0] - c[0][0])

    def _state(self, tv, d, now):
        if "state" in d:
            tv.state = d["state"]
        tv.state_rx = now
        if "fault" not in d:       # dropped: what the table's fault is, unknown
            return
        code = d["fault"]
        if code is None:
            tv.fault = None
        elif tv.fault is None or tv.fault["code"] != code:
            tv.fault = self._fault_of({"code": code, "t": d.get("t")}, now)
            self._new_entry(tv, tv.fault)     # from the state alone: its history entry now

    def _fault(self, tv, d, now):
        if "code" not in d:        # a fault without its code says nothing
            return
        f = self._fault_of(d, now)
        tv.faults_seen[f["code"]] = tv.faults_seen.get(f["code"], 0) + 1
        if tv.fault is not None and tv.fault["code"] == f["code"] and tv.fault.get("entry"):
            tv.fault["entry"].update(name=f["name"], detail=f["detail"], t=f["t"])
            f["entry"] = tv.fault["entry"]
            f["since"] = tv.fault["since"]
        else:
            self._new_entry(tv, f)
        tv.fault = f

    def _fault_of(self, d, now):
        return {"code": d["code"], "name": d.get("name"), "detail": d.get("detail"),
                "t": d.get("t"), "since": self.wall(), "rx": now}

    def _new_entry(self, tv, f):
        entry = {"site": tv.site, "table": tv.id, "code": f["code"], "name": f["name"],
                 "detail": f["detail"], "t": f["t"], "at": f["since"], "cleared_at": None}
        f["entry"] = entry
        self.history.append(entry)
        del self.history[:-HISTORY]

    def _cleared(self, tv, d, now):
        f = tv.fault
        if f is not None and f.get("entry") is not None:
            f["entry"]["cleared_at"] = self.wall()
        tv.fault = None

    def _hand(self, tv, d, now):
        tv.last_hand = d
        if "dealer" in d:
            tv.dealer = d["dealer"]
        if "hands" in d:
            self._hands(tv, d["hands"])

    def _counters(self, tv, d, now):
        tv.counters = d
        if "hands" in d:
            self._hands(tv, d["hands"])

    def _hands(self, tv, n):
        if tv.hands_base is None or n < tv.hands_base:     # the first today, or counters reset
            tv.hands_base = n
        tv.hands = n

    def _health(self, tv, d, now):
        tv.health = d
        tv.health_rx = (tv.health_rx + [now])[-2:]

    def _build(self, tv, d, now):
        tv.build = d

    def _roll(self, tv, now):
        """Time in use and hands today: counted since local midnight (or
        since the page started, when later)."""
        day = time.localtime(self.wall()).tm_yday
        if tv.day != day:
            tv.day = day
            tv.hands_base = tv.hands
            tv.in_use_s = 0.0
        if tv.state_rx is not None and tv.state in IN_USE and self._online(tv, now)[0]:
            tv.in_use_s += max(0.0, now - tv.state_rx)
        tv.state_rx = now if tv.state_rx is not None else None

    # -- the view -------------------------------------------------------------------

    def stale_after(self, tv):
        rx = tv.health_rx
        pace = self.pace(tv)
        if pace is None and len(rx) < 2:
            return max(self.stale_s, BOOT_STALE_S)
        interval = rx[1] - rx[0] if len(rx) == 2 else 0.0
        if pace:
            interval = max(interval, HEALTH_MS / 1000.0 / pace)
        return max(self.stale_s, STALE_HEALTH * interval)

    def _online(self, tv, now):
        """(online, why not): "bridge" its parlour's bridge is down, "will"
        its last-will or the broker said so, "silent" nothing from it for
        stale_after, "never" not heard yet."""
        if self.bridges.get(tv.site) is False:
            return False, "bridge"
        if tv.online is False:
            return False, "will"
        if tv.last_rx is None:
            return False, "never"
        if now - tv.last_rx > self.stale_after(tv):
            return False, "silent"
        return True, None

    def snapshot(self, now=None):
        """Everything the page and mjctl fleet show, JSON-able."""
        now = self.clock() if now is None else now
        out = []
        for key in sorted(self.tables, key=lambda k: (natural(k[0]), natural(k[1]))):
            tv = self.tables[key]
            self._roll(tv, now)
            online, why = self._online(tv, now)
            f = tv.fault
            out.append({
                "site": tv.site, "id": tv.id, "online": online, "offline": why,
                "silent_s": None if tv.last_rx is None else round(now - tv.last_rx, 1),
                "stale_after_s": round(self.stale_after(tv), 1),
                "pace": None if self.pace(tv) is None else round(self.pace(tv), 2),
                "state": tv.state,
                "fault": None if f is None else {k: f[k] for k in ("code", "name", "detail", "t",
                                                                    "since")},
                "dealer": tv.dealer, "hands": tv.hands,
                "hands_today": None if tv.hands is None else tv.hands - (tv.hands_base or 0),
                "in_use_s": round(tv.in_use_s), "last_hand": tv.last_hand,
                "counters": tv.counters, "health": tv.health, "build": tv.build,
                "messages": tv.messages, "bad": tv.bad, "dropped": tv.dropped,
                "faults_seen": {str(k): n for k, n in sorted(tv.faults_seen.items(),
                                                              key=lambda kv: str(kv[0]))}})
        return {"now": self.wall(), "started": self.started, "broker": self.broker,
                "bridges": dict(self.bridges),
                "messages": self.messages, "bad": self.bad, "dropped": self.dropped,
                "stale_s": self.stale_s,
                "tables": out,
                "history": [dict(e) for e in reversed(self.history[-50:])]}
