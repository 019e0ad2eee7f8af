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

The day's figures (days.py): each table's hands and faults by its
counters' rise, and the wall time it spends in play, stopped by a fault
and offline, by local day. `restore` gives the model what the store kept
(the day so far, the counters' marks, the dealer, since when a fault or
an offline table began), `take_days` and `memory` what to keep.
"""

import json
import re
import time

from host_tools.fleet.days import TableDay, day_of, natural, rise, totals
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
# What needs the owner first: a table in fault, then offline, then idle,
# then those in play (the page's and mjctl fleet's order), by the bucket
# its time counts in.
NEED = {"stopped_s": 0, "offline_s": 1, None: 2, "in_play_s": 3}


def by_need(tables):
    """The snapshot's tables in the order the owner reads them."""
    return sorted(tables, key=lambda tb: (tb["need"], natural(tb["site"]), natural(tb["id"])))


class TableView:
    def __init__(self, site, tid):
        self.site = site
        self.id = tid
        self.online = None         # the `online` topic: True, False, None (not seen)
        self.last_rx = None        # monotonic seconds of its last message
        self.health_rx = []        # the last two health messages' arrivals
        self.clock = []            # (arrival, table ms) of its timestamped messages, PACE_S
        self.state = None
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
        self.hands = None          # its hand counter
        self.hands_mark = None     # its counters' last values the day counts from (days.rise)
        self.faults_mark = None
        self.today = None          # days.TableDay
        self.bucket = None         # where its time counts now: a TableDay time, or None (idle)
        self.rolled = None         # monotonic seconds its time was last counted
        self.offline_since = None  # epoch seconds
        self.remembered = {}       # what the store kept of it (days.MEMORY)


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
        self.broker_since = None   # epoch seconds of the broker connection's last change
        self.closed = []           # (site, id, TableDay) of days over, not yet taken
        self.remembered = {}       # (site, id) -> days.MEMORY, from the store
        self.kept_today = {}       # (site, id) -> the store's row of today
        self.expect = list(expect)
        for s, tid in expect:
            self._table(s, tid)

    def _table(self, site, tid):
        key = (site, tid)
        tv = self.tables.get(key)
        if tv is None:
            tv = self.tables[key] = TableView(site, tid)
            self._recall(tv)
        return tv

    # -- the store's memory -------------------------------------------------------

    def restore(self, memory, today_rows):
        """What the store kept: memory {(site, id): days.MEMORY}, today's
        rows. A table's view takes its part when it is made (a table the
        store knows that does not speak again shows no view of its own)."""
        self.remembered = dict(memory)
        today = day_of(self.wall())
        self.kept_today = {(r["site"], r["tbl"]): r for r in today_rows if r["day"] == today}
        for tv in self.tables.values():
            self._recall(tv)

    def _recall(self, tv):
        key = (tv.site, tv.id)
        mem = tv.remembered = self.remembered.get(key, {})
        tv.hands_mark, tv.faults_mark = mem.get("hands_mark"), mem.get("faults_mark")
        if tv.dealer is None:
            tv.dealer = mem.get("dealer")
        tv.offline_since = mem.get("offline_since")
        if key in self.kept_today:
            tv.today = TableDay(self.kept_today[key]["day"], self.kept_today[key])

    def take_days(self):
        """(site, id, TableDay) of the days over since the last call and
        of today for every table: what the store saves."""
        out, self.closed = self.closed, []
        return out + [(tv.site, tv.id, tv.today) for tv in self.tables.values()
                      if tv.today is not None]

    def memory(self):
        return {key: {"hands_mark": tv.hands_mark, "faults_mark": tv.faults_mark,
                      "dealer": tv.dealer, "fault_code": tv.fault and tv.fault["code"],
                      "fault_since": tv.fault and tv.fault["since"],
                      "offline_since": tv.offline_since}
                for key, tv in self.tables.items()}

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
            self._settle(tv, now)
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
        self._settle(tv, now)
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
        if "fault" not in d:       # dropped: what the table's fault is, unknown
            return
        code = d["fault"]
        if code is None:
            tv.fault = None
        elif tv.fault is None or tv.fault["code"] != code:
            tv.fault = self._fault_of({"code": code, "t": d.get("t")}, now, tv)
            self._new_entry(tv, tv.fault)     # from the state alone: its history entry now

    def _fault(self, tv, d, now):
        if "code" not in d:        # a fault without its code says nothing
            return
        f = self._fault_of(d, now, tv)
        tv.faults_seen[f["code"]] = tv.faults_seen.get(f["code"], 0) + 1
        if tv.fault is not None and tv.fault["code"] == f["code"] and tv.fault.get("entry"):
            tv.fault["entry"].update(name=f["name"], detail=f["detail"], t=f["t"])
            f["entry"] = tv.fault["entry"]
            f["since"] = tv.fault["since"]
        else:
            self._new_entry(tv, f)
        tv.fault = f

    def _fault_of(self, d, now, tv):
        """A fault as the view holds it; since when: now, or when the store
        saw the same fault begin (the page restarted meanwhile)."""
        mem = tv.remembered
        since = mem["fault_since"] if mem.get("fault_code") == d["code"] and \
            mem.get("fault_since") else self.wall()
        return {"code": d["code"], "name": d.get("name"), "detail": d.get("detail"),
                "t": d.get("t"), "since": since, "rx": now}

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
        if "faults" in d:
            n, tv.faults_mark = rise(tv.faults_mark, sum(p[1] for p in d["faults"]))
            tv.today.faults += n

    def _hands(self, tv, n):
        more, tv.hands_mark = rise(tv.hands_mark, n)
        tv.today.hands += more
        tv.hands = n

    def _health(self, tv, d, now):
        tv.health = d
        tv.health_rx = (tv.health_rx + [now])[-2:]

    def _build(self, tv, d, now):
        tv.build = d

    def _roll(self, tv, now):
        """The time since the last count added where it belonged (in play,
        stopped, offline, or nowhere: idle); a new day begun at local
        midnight, the last one kept for the store."""
        if tv.today is None:
            tv.today = TableDay(day_of(self.wall()))
        if tv.rolled is not None and tv.bucket is not None:
            split = now
            if tv.bucket != "offline_s" and self._online(tv, now)[1] == "silent":
                # Silent since its last message: offline from there on.
                split = max(tv.rolled, min(now, tv.last_rx))
                tv.today.offline_s += now - split
            setattr(tv.today, tv.bucket, getattr(tv.today, tv.bucket) + max(0.0, split - tv.rolled))
        tv.rolled = now
        day = day_of(self.wall())
        if tv.today.day != day:
            self.closed.append((tv.site, tv.id, tv.today))
            tv.today = TableDay(day)

    def _settle(self, tv, now):
        """Where the table's time counts from now on, and since when it is
        offline: from its last message when it fell silent."""
        online, why = self._online(tv, now)
        if online:
            tv.offline_since = None
            tv.bucket = "stopped_s" if tv.fault is not None or tv.state == "fault" else \
                "in_play_s" if tv.state in IN_USE else None
            return
        if tv.offline_since is None:
            back = now - tv.last_rx if why == "silent" and tv.last_rx is not None else 0.0
            tv.offline_since = self.wall() - back
        tv.bucket = "offline_s"

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
            self._settle(tv, now)
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
                "need": NEED[tv.bucket], "offline_since": tv.offline_since,
                "today": tv.today.figures(),
                "dealer": tv.dealer, "hands": tv.hands,
                "hands_today": None if tv.hands is None and not tv.today.hands else tv.today.hands,
                "in_use_s": round(tv.today.in_play_s), "last_hand": tv.last_hand,
                "counters": tv.counters, "health": tv.health, "build": tv.build,
                "messages": tv.messages, "bad": tv.bad, "dropped": tv.dropped,
                "faults_seen": {str(k): n for k, n in sorted(tv.faults_seen.items(),
                                                              key=lambda kv: str(kv[0]))}})
        return {"now": self.wall(), "started": self.started, "broker": self.broker,
                "broker_since": self.broker_since, "day": day_of(self.wall()),
                "today": totals([tb["today"] for tb in out]),
                "bridges": dict(self.bridges),
                "messages": self.messages, "bad": self.bad, "dropped": self.dropped,
                "stale_s": self.stale_s,
                "tables": out,
                "history": [dict(e) for e in reversed(self.history[-50:])]}
