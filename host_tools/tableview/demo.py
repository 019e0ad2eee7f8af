"""The demo's host side: what the link told us (ViewState), the players
(a Parlour of virtual players), the technician (Demo), and their tunables."""

import collections

from firmware.faults import (BUILD_TIMEOUT, DISPLAY_UNPLUGGED, EXTRA_TILE, LANE_JAM, LIFT_STUCK,
                             MISSING_TILE, PLATE_STALL, POWER_LOST, RFID_CRC, RFID_TIMEOUT,
                             SENSOR_STUCK, UNKNOWN_TAG)
from firmware.link.codec import LinkError
from host_tools.tableview.snapshot import cycle_text, result_text
from host_tools import texts
from host_tools.vtable.hand_players import Parlour

DEFAULT_SPEED = 5.0
FIX_AFTER_S = 20.0          # virtual seconds before the technician repairs a fault
FRAME_S = 0.1               # the live view's refresh period (wall)
EVENTS_SHOWN = 8
HAND_EVENTS_SHOWN = 6       # the hand panel's "last" line
FLASH_MS = 2000             # a key press or beep stays lit this long (virtual ms)

# Which injected table faults a technician looks for, by the controller's fault code.
SUSPECTS = {
    LANE_JAM: ("lane_jam", "sensor_stuck"),
    PLATE_STALL: ("plate_stall", "sensor_stuck"),
    LIFT_STUCK: ("lift_stuck", "sensor_stuck"),
    SENSOR_STUCK: ("sensor_stuck",),
    BUILD_TIMEOUT: ("lane_jam", "plate_stall", "sensor_stuck"),
    MISSING_TILE: ("missing_tile",),
    EXTRA_TILE: ("extra_tile",),
    UNKNOWN_TAG: ("unknown_tag",),
    RFID_TIMEOUT: ("rfid_timeout",),
    RFID_CRC: ("rfid_crc",),
    DISPLAY_UNPLUGGED: ("display_unplugged",),
}


# -- what the link told us -----------------------------------------------------

class ViewState:
    """Everything the view knows besides the VirtualTable itself: the link's
    events and the host's own actions. Plain data, no I/O."""

    def __init__(self, seed=0, speed=DEFAULT_SPEED, code="", target=None):
        self.seed = seed
        self.speed = speed
        self.code = code                 # which firmware tree runs (mpy or source)
        self.target = target             # --cycles
        self.restarts = 0
        self.state = None                # the controller's, from `state` events
        self.cycles = 0                  # dice shown
        self.cycle_start = None          # virtual ms: `start` or a `result` took effect
        self.last_cycle = None
        self.fault = None                # the last fault, described, with "active"
        self.fix_at = None               # virtual ms
        self.events = collections.deque(maxlen=EVENTS_SHOWN)
        self.hand = None                 # the last `hand` event's fields: the hand in play
        self.hand_events = collections.deque(maxlen=HAND_EVENTS_SHOWN)
        self.result = None               # the last `result` event's fields, with "t"
        self.hands = 0                   # results seen
        self.draws = 0                   # of which draws (no winner)

    def record(self, t, name, fields, host=False):
        entry = {"t": t, "name": name, "fields": fields, "host": host}
        self.events.append(entry)
        return entry


def cycle_bound_ms(table, start):
    """The lower bound of the cycle that began at `start` (virtual ms) and
    just showed its dice: the latest complete build's bound (from its own
    plate start, bound.py), and never less than lifting, the dealer's
    reaction and the roll after `start` (a set built during the hand)."""
    b = table.lower_bound()
    if b is None or start is None:
        return None
    after = start + b["lift_ms"] + b["reaction_ms"] + b["dice_ms"]
    return max(b["finish_at"], after) - start


def technician(table, code):
    """Repair on the virtual table what explains fault `code`, as a
    technician would. Returns what was done (fault strings)."""
    done = []
    kinds = SUSPECTS.get(code, ())
    for f in list(table.faults):
        if f.kind in kinds:
            done += table.clear_fault(f.text)
    if code == POWER_LOST:
        # The fix text: tip any half-built walls into the tray.
        table.technician_empties_lanes()
        done.append("lanes emptied")
    return done


def seat_players(table, seed):
    """The virtual players of every hand, seeded from the view's seed
    (hand_players.Parlour). Seat them before the table starts."""
    return Parlour(table, seed="tableview:%s" % seed)


class Demo:
    """The host's side of the demo: reacts to link events and to virtual time.
    The players (seat_players) play the hands and the firmware follows them;
    the host only starts the table and sends the technician."""

    def __init__(self, sim, link, view, fix_after_s=FIX_AFTER_S, echo=None):
        self.sim = sim
        self.table = sim.table
        self.link = link
        self.view = view
        self.fix_after_ms = int(fix_after_s * 1000)
        self.echo = echo                 # plain mode: called with each new entry
        self.done = False
        self._cycle_pending = False

    def _record(self, t, name, fields, host=False, extra=()):
        entry = self.view.record(t, name, fields, host)
        if self.echo is not None:
            self.echo(entry, extra)

    def begin(self):
        self.link.hello()
        st = self.link.request("status")
        if not st["fault"]:              # else its event comes: cleared, it starts
            self._start()

    def _start(self):
        self._record(self.table.now, "start", {}, host=True)
        self.link.request("start")
        self._cycle_pending = True

    # -- the link's events ---------------------------------------------------

    def on_event(self, ev):
        v = self.view
        name = ev["ev"]
        t = ev.get("t", self.table.now)
        fields = {k: ev[k] for k in sorted(ev) if k not in ("ev", "t")}
        extra = ()
        if name == "fault":
            from host_tools.mjctl import describe_fault
            v.fault = dict(describe_fault(ev), active=True, cleared_t=None, resume=None)
            v.fix_at = t + self.fix_after_ms
            extra = ((texts.t("fault.cause"), v.fault["cause"]),
                     (texts.t("fault.fix"), v.fault["fix"]))
        self._record(t, name, fields, extra=extra)
        if name == "state":
            v.state = ev["state"]
            if self._cycle_pending and v.state in ("building", "lifting"):
                v.cycle_start = t
                self._cycle_pending = False
            if v.state in ("idle", "dealer"):    # new walls are up (or a restart)
                v.hand = None
                v.hand_events.clear()
            if v.state == "in_hand" and v.target is not None and v.cycles >= v.target:
                self.done = True
        elif name == "dice" and ev.get("gold"):     # the dealer's roll for the gold (§7)
            v.hand_events.append({"t": t, "op": "gold dice", "dice": [ev["a"], ev["b"]]})
        elif name == "dice":
            v.cycles += 1
            bound = cycle_bound_ms(self.table, v.cycle_start)
            v.last_cycle = {
                "n": v.cycles, "dice": [ev["a"], ev["b"]], "dealer": ev["dealer"],
                "table_time_s": None if v.cycle_start is None else (t - v.cycle_start) / 1000.0,
                "lower_bound_s": None if bound is None else bound / 1000.0,
            }
            if self.echo is not None:
                self.echo(None, (("#", cycle_text(v.last_cycle)),))
        elif name in ("hand", "irregular"):
            if name == "hand":
                if fields["n"] == 0:
                    v.hand_events.clear()
                v.hand = fields
            shown = {k: fields[k] for k in ("seat", "kind", "slot", "gold") if k in fields}
            v.hand_events.append(dict(shown, t=t, op=fields.get("op", name)))
        elif name == "result":
            v.result = dict(fields, t=t)
            v.hands += 1
            v.draws += fields["winner"] is None
            self._cycle_pending = True   # the table goes on by itself
            if self.table.config.tile_sets == 1:
                self.table.players_clear_table()   # the old walls into the tray
            if self.echo is not None:
                self.echo(None, (("#", result_text(v.hands, v.result)),))
        elif name == "cleared":
            if v.fault is not None:
                v.fault.update(active=False, cleared_t=t, resume=ev.get("resume"))
            v.fix_at = None
            if ev.get("resume") == "idle" and not self.done:
                self._start()           # restarted during a cycle: start again

    # -- virtual time ----------------------------------------------------------

    def tick(self):
        v = self.view
        v.restarts = self.sim.restarts
        now = self.table.now
        if v.fix_at is not None and now >= v.fix_at:
            self._fix(now)

    def _fix(self, now):
        v = self.view
        v.fix_at = None
        code = v.fault["code"] if v.fault else None
        repaired = technician(self.table, code)
        self._record(now, "technician", {"repaired": repaired}, host=True)
        self._record(now, "clear", {}, host=True)
        try:
            self.link.request("clear")
        except LinkError as e:
            self._record(now, "clear refused", {"error": str(e)}, host=True)
            v.fix_at = now + 1000
