"""Watch the virtual table play cycles with the real firmware (the `make run` demo).

    python -m host_tools.tableview [--seed N] [--speed X] [--cycles N] [--hand S]
                                   [--fault NAME[:ARG]]... [--plain]

The firmware runs under the MicroPython unix port on the virtual table
(host_tools/vtable), in real time `--speed` times faster than the wall clock
(5x by default: a 32 s build shows in about 6 s). This tool is the host on
the link (docs/protocol.md): it starts a cycle, and when the dice have
settled it stands in for the hand - it waits `--hand` virtual seconds and
sends `hand_end` with a random winner (or a draw) - and so on, until Ctrl-C
or `--cycles` cycles (walls built, lifted, dice shown). With two tile sets
the next set is built during the hand: it lifts at once when the hand is
longer than a build, else the build goes on after `hand_end`.

`--fault` injects a virtual table fault (host_tools/vtable/faults.py) at
power-on. When the controller reports a fault the view shows its code,
name, cause and fix (firmware/faults.py); `--fix-after` virtual seconds
later a technician repairs the table (VirtualTable.clear_fault; after an
audit fault that tips the lanes into the tray) and the view sends `clear`,
so the demo goes on.

On a terminal: a rich Live view of the machine (lanes, plate, lifters), the
display board as the players see it, the seat keys, the controller's state,
faults and the last link events, redrawn about 10 times a second. With
--plain, or when stdout is not a terminal: one plain line per link event
(`<virtual s>  <event>  <fields>`), host actions as `<virtual s>  > <action>`,
remarks as `# ...`. Ctrl-C stops cleanly (the firmware is stopped, exit 0).

Data and drawing are apart: `snapshot(table, view)` reads the VirtualTable
and the link-derived `ViewState` into a plain dict, `render(snap, width)`
turns a snapshot into a rich renderable.
"""

import argparse
import collections
import json
import os
import random
import signal
import sys
import threading
import time

from engine_core import tiles
from firmware.link.codec import LinkError

DEFAULT_SPEED = 5.0
HAND_S = 8.0                # virtual seconds a "hand" lasts
FIX_AFTER_S = 20.0          # virtual seconds before the technician repairs a fault
FRAME_S = 0.1               # the live view's refresh period (wall)
EVENTS_SHOWN = 8
FLASH_MS = 2000             # a key press or beep stays lit this long (virtual ms)
POWER_LOST = 41

# Which injected table faults a technician looks for, by the controller's fault code.
SUSPECTS = {
    10: ("lane_jam", "sensor_stuck"),
    11: ("plate_stall", "sensor_stuck"),
    12: ("lift_stuck", "sensor_stuck"),
    13: ("sensor_stuck",),
    14: ("lane_jam", "plate_stall", "sensor_stuck"),
    20: ("missing_tile",),
    21: ("extra_tile",),
    22: ("unknown_tag",),
    23: ("rfid_timeout",),
    24: ("rfid_crc",),
    30: ("display_unplugged",),
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
        self.cycle_start = None          # virtual ms: `start` or `hand_end` took effect
        self.last_cycle = None
        self.winner = "none yet"         # of the last hand: a seat, None (a draw)
        self.fault = None                # the last fault, described, with "active"
        self.hand_end_at = None          # virtual ms
        self.fix_at = None               # virtual ms
        self.events = collections.deque(maxlen=EVENTS_SHOWN)

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


class Demo:
    """The host's side of the demo: reacts to link events and to virtual time."""

    def __init__(self, sim, link, view, hand_s=HAND_S, fix_after_s=FIX_AFTER_S, echo=None):
        self.sim = sim
        self.table = sim.table
        self.link = link
        self.view = view
        self.hand_ms = int(hand_s * 1000)
        self.fix_after_ms = int(fix_after_s * 1000)
        self.echo = echo                 # plain mode: called with each new entry
        self.rng = random.Random("tableview:%s" % view.seed)
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
            extra = (("cause", v.fault["cause"]), ("fix", v.fault["fix"]))
        self._record(t, name, fields, extra=extra)
        if name == "state":
            v.state = ev["state"]
            if self._cycle_pending and v.state in ("building", "lifting"):
                v.cycle_start = t
                self._cycle_pending = False
            if v.state == "in_hand":
                if v.target is not None and v.cycles >= v.target:
                    self.done = True
                elif v.hand_end_at is None:
                    v.hand_end_at = t + self.hand_ms
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
        if v.hand_end_at is not None and v.state == "in_hand" and now >= v.hand_end_at:
            self._hand_end(now)

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

    def _hand_end(self, now):
        v = self.view
        winner = self.rng.choice((0, 1, 2, 3, None))
        if self.table.config.tile_sets == 1:
            self.table.players_clear_table()
        self._record(now, "hand_end", {"winner": winner}, host=True)
        try:
            self.link.request("hand_end", winner=winner)
        except LinkError as e:
            self._record(now, "hand_end refused", {"error": str(e)}, host=True)
            v.hand_end_at = now + 1000   # try again (a fault, say)
            return
        v.hand_end_at = None
        v.winner = winner
        self._cycle_pending = True


# -- the snapshot ----------------------------------------------------------------

def snapshot(table, view):
    """Everything the view shows, as plain data. The bus thread moves the
    table meanwhile: a read that collides with it is simply taken again."""
    for _ in range(5):
        try:
            return _snapshot(table, view)
        except (RuntimeError, IndexError, KeyError):
            time.sleep(0.001)
    return _snapshot(table, view)


def _snapshot(table, view):
    now = table.now
    cap = 2 * table.stacks
    plate = table.plate
    lanes = [{"seat": l.side, "tiles": len(l.wall.tiles), "cap": cap, "feed": bool(l.feed),
              "stacking": l.stacking(), "chute": l.chute is not None, "jammed": l.jammed}
             for l in table.lanes]
    lifters = []
    for lf in table.lifters:
        d = lf.direction()
        moving = "up" if d > 0 and lf.pos < lf.top else "down" if d < 0 and lf.pos > 0 else None
        lifters.append({"side": lf.side, "pos": lf.pos / lf.top, "moving": moving,
                        "at_top": lf.at_top, "at_bottom": lf.at_bottom, "stuck": lf.stuck,
                        "driven": bool(lf.up or lf.down), "trips": lf.cycles})
    disp = table.display
    gold = None
    if disp.gold != 255:
        gold = tiles.CODES[disp.gold] if disp.gold < len(tiles.CODES) else "?%d" % disp.gold
    presses = list(table.players.presses)
    keys = []
    for seat, pin in enumerate(table.players.pins):
        last = None
        for t, s in reversed(presses):
            if s == seat:
                last = t
                break
        keys.append({"seat": seat, "down": bool(table.reported.get(pin)), "last_press": last})
    buzz = list(table.buzzer)
    beeps = [t for t, value in buzz if value]
    fault = dict(view.fault) if view.fault else None
    return {
        "now_ms": now,
        "speed": view.speed,
        "seed": view.seed,
        "code": view.code,
        "restarts": view.restarts,
        "state": view.state,
        "cycles": view.cycles,
        "target": view.target,
        "last_cycle": dict(view.last_cycle) if view.last_cycle else None,
        "winner": view.winner,
        "hand_end_in_ms": None if view.hand_end_at is None else max(0, view.hand_end_at - now),
        "fix_in_ms": None if view.fix_at is None else max(0, view.fix_at - now),
        "lanes": lanes,
        "plate": {"turning": plate.turning, "duty": plate.duty, "stalled": plate.stalled,
                  "revolutions": plate.revolutions, "phase": plate.phase / plate.rev_units,
                  "tiles": len(plate.queue)},
        "lifters": lifters,
        "in_play": [len(table.top_walls[s]) for s in range(4)],
        "display": {"gold": gold, "dice": disp.dice, "dealer": disp.dealer_seat,
                    "streak": disp.dealer[1], "text": disp.text, "unplugged": disp.unplugged},
        "keys": keys,
        "buzzer": {"on": bool(buzz and buzz[-1][1]), "beeps": len(beeps),
                   "last_beep": beeps[-1] if beeps else None},
        "fault": fault,
        "injected": table.active_faults,
        "events": [dict(e) for e in view.events],
    }


# -- plain text -------------------------------------------------------------------

def _value(v):
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return "null" if v is None else str(v)


def fields_text(fields):
    return " ".join("%s=%s" % (k, _value(v)) for k, v in fields.items())


def cycle_text(c):
    """A cycle's figures in words."""
    out = "cycle %d: dice %d+%d, dealer seat %d" % (c["n"], c["dice"][0], c["dice"][1],
                                                     c["dealer"])
    if c["table_time_s"] is not None:
        out += ", table time %.2f s" % c["table_time_s"]
        if c["lower_bound_s"]:
            out += ", lower bound %.2f s (+%.1f %%)" % (
                c["lower_bound_s"], 100.0 * (c["table_time_s"] / c["lower_bound_s"] - 1))
    return out


def plain_lines(entry, extra=()):
    """The plain lines of one entry: a link event `t  name  fields`, a host
    action `t  > name  fields`, then indented extra lines (a fault's cause
    and fix; a `#` remark). No entry: the extra lines alone."""
    out = []
    if entry is not None:
        name = ("> " + entry["name"]) if entry["host"] else entry["name"]
        out.append("%10.3f  %-10s %s" % (entry["t"] / 1000.0, name, fields_text(entry["fields"])))
    for key, text in extra:
        if key == "#":
            out.append("# " + text)
        else:
            out.append("%12s%-6s %s" % ("", key + ":", text))
    return [line.rstrip() for line in out]


# -- the rich view ------------------------------------------------------------------

STATE_STYLE = {"idle": "dim", "building": "bold cyan", "lifting": "bold blue",
               "dealer": "bold yellow", "rolling": "bold magenta", "in_hand": "bold green",
               "fault": "bold white on red", "boot": "dim"}
SPIN = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PLATE = "◐◓◑◒"


def _clock(ms):
    s = ms / 1000.0
    return "%02d:%04.1f" % (int(s // 60), s % 60)


def _wall_bar(n, cap):
    """The wall in a lane, one cell a stack: bottom layer first, then top."""
    stacks = cap // 2
    full, half = divmod(min(n, cap), 2)
    return "█" * full + "▄" * half + "·" * (stacks - full - half)


def _lift_bar(pos, width=10):
    k = int(round(pos * width))
    return "▕" + "█" * k + "░" * (width - k) + "▏"


def render(snap, width=120):
    """The rich renderable of one snapshot for a terminal `width` wide:
    panels side by side as far as they fit (about 35 lines at 80 columns)."""
    from rich.console import Group
    from rich.table import Table

    header = _header(snap)
    machine = _machine_panel(snap)
    board = _board_panel(snap)
    ctl = _controller_panel(snap)
    fault = _fault_panel(snap)
    events = _events_panel(snap)
    if width < 76:
        return Group(header, machine, board, ctl, fault, events)
    grid = Table.grid(padding=(0, 1), expand=True)
    if width < 110:
        grid.add_column(ratio=1)
        grid.add_column(ratio=1)
        grid.add_row(board, ctl)
        return Group(header, machine, grid, fault, events)
    grid.add_column(ratio=3)
    grid.add_column(ratio=2)
    grid.add_row(machine, board)
    grid.add_row(ctl, fault)
    return Group(header, grid, events)


def _header(snap):
    from rich.text import Text
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(" Fuzhou mahjong table ", style="bold black on white")
    t.append("  virtual ")
    t.append(_clock(snap["now_ms"]), style="bold")
    t.append("  speed %gx" % snap["speed"])
    t.append("  seed %s" % snap["seed"])
    state = snap["state"] or "-"
    t.append("  ")
    t.append(" %s " % state.upper(), style=STATE_STYLE.get(state, "bold"))
    t.append("  cycles %d" % snap["cycles"] + ("/%d" % snap["target"] if snap["target"] else ""))
    t.append("   Ctrl-C stops", style="dim")
    return t


def _machine_panel(snap):
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    now = snap["now_ms"]
    t = Table(box=None, padding=(0, 0, 0, 1), pad_edge=False, show_edge=False, expand=False,
              header_style="bold dim")
    t.add_column("seat", justify="right", style="bold", no_wrap=True, min_width=4)
    t.add_column("lane: the wall", no_wrap=True, min_width=18)
    t.add_column("tiles", justify="right", no_wrap=True, min_width=5)
    t.add_column("feed", no_wrap=True, min_width=5)
    t.add_column("lifter", no_wrap=True, min_width=12)
    t.add_column("", no_wrap=True, min_width=6)
    t.add_column("in play", justify="right", no_wrap=True, min_width=7)
    for lane, lf, play in zip(snap["lanes"], snap["lifters"], snap["in_play"]):
        full = lane["tiles"] >= lane["cap"]
        bar = Text(_wall_bar(lane["tiles"], lane["cap"]),
                   style="green" if full else "yellow" if lane["tiles"] else "dim")
        if lane["jammed"]:
            feed = Text("JAM", style="bold red")
        elif lane["feed"]:
            feed = Text(("▶ " if (now // 250) % 2 else "▷ ") + "on", style="cyan")
        else:
            feed = Text("  off", style="dim")
        if lf["stuck"]:
            motion = Text("stuck", style="bold red")
        elif lf["moving"] == "up":
            motion = Text("▲ up", style="bold blue")
        elif lf["moving"] == "down":
            motion = Text("▼ down", style="blue")
        elif lf["at_top"]:
            motion = Text("top")
        elif lf["at_bottom"]:
            motion = Text("bottom", style="dim")
        else:
            motion = Text("halted", style="yellow")
        t.add_row(str(lane["seat"]), bar, "%d/%d" % (lane["tiles"], lane["cap"]), feed,
                  Text(_lift_bar(lf["pos"]), style="blue" if lf["moving"] else ""),
                  motion, str(play))
    p = snap["plate"]
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("plate ", style="bold")
    if p["stalled"]:
        line.append("STALLED", style="bold red")
    elif p["turning"]:
        line.append(PLATE[int(p["phase"] * 4) % 4] + " turning", style="cyan")
    else:
        line.append("○ stopped", style="dim")
    line.append("   %d revolutions   %d tiles in the tray" % (p["revolutions"], p["tiles"]))
    return Panel(Group(t, line), title="the machine: lanes, lifters, plate", title_align="left")


def _board_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    now = snap["now_ms"]
    d = snap["display"]
    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(no_wrap=True)
    if d["unplugged"]:
        g.add_row("board", Text("UNPLUGGED", style="bold red"))
    g.add_row("gold", Text(d["gold"] or "—", style="bold yellow" if d["gold"] else "dim"))
    dice = d["dice"]
    if dice is None:
        g.add_row("dice", Text("—", style="dim"))
    elif dice[2]:
        spin = SPIN[(now // 100) % len(SPIN)]
        g.add_row("dice", Text("%s %s  rolling" % (spin, spin), style="bold magenta"))
    else:
        g.add_row("dice", Text("%d + %d = %d" % (dice[0], dice[1], dice[0] + dice[1]),
                               style="bold"))
    lamps = Text()
    for seat in range(4):
        on = d["dealer"] == seat
        lamps.append("●" if on else "○", style="bold red" if on else "dim")
        lamps.append("%d " % seat, style="bold" if on else "dim")
    if d["dealer"] is not None:
        lamps.append(" streak %d" % d["streak"])
    g.add_row("dealer", lamps)
    g.add_row("text", Text(d["text"] or "—", style="" if d["text"] else "dim"))
    keys = Text()
    for k in snap["keys"]:
        lit = k["down"] or (k["last_press"] is not None and now - k["last_press"] < FLASH_MS)
        keys.append(" %d " % k["seat"], style="bold black on yellow" if lit else "dim reverse")
        keys.append(" ")
    g.add_row("keys", keys)
    b = snap["buzzer"]
    lit = b["on"] or (b["last_beep"] is not None and now - b["last_beep"] < FLASH_MS)
    g.add_row("buzzer", Text(("♪ beep" if lit else "quiet") + "  (%d beeps)" % b["beeps"],
                             style="bold yellow" if lit else "dim"))
    return Panel(g, title="display board, keys", title_align="left")


def _controller_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column()
    state = snap["state"] or "-"
    g.add_row("state", Text(state.upper(), style=STATE_STYLE.get(state, "bold").replace(
        "white on red", "red")))
    done = "%d" % snap["cycles"] + (" of %d" % snap["target"] if snap["target"] else "")
    g.add_row("cycles", done)
    c = snap["last_cycle"]
    if c and c["table_time_s"] is not None:
        text = "%.2f s table time" % c["table_time_s"]
        if c["lower_bound_s"]:
            text += ", lower bound %.2f s (+%.1f %%)" % (
                c["lower_bound_s"], 100.0 * (c["table_time_s"] / c["lower_bound_s"] - 1))
        g.add_row("last cycle", text)
        g.add_row("", "dice %d+%d, dealer seat %d" % (c["dice"][0], c["dice"][1], c["dealer"]))
    else:
        g.add_row("last cycle", Text("—", style="dim"))
    if snap["hand_end_in_ms"] is not None and state == "in_hand":
        g.add_row("hand", "ends in %.1f s (virtual)" % (snap["hand_end_in_ms"] / 1000.0))
    elif snap["winner"] != "none yet":
        w = snap["winner"]
        g.add_row("last hand", "a draw" if w is None else "seat %d won" % w)
    if snap["injected"]:
        g.add_row("injected", Text(", ".join(snap["injected"]), style="red"))
    g.add_row("firmware", Text(snap["code"] + (", %d restarts" % snap["restarts"]
                                               if snap["restarts"] else ""), style="dim"))
    return Panel(g, title="controller", title_align="left")


def _fault_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    f = snap["fault"]
    if f is None:
        return Panel(Text("no fault", style="dim"), title="fault", title_align="left")
    g = Table.grid(padding=(0, 1))
    g.add_column(style="bold", no_wrap=True)
    g.add_column()
    head = Text()
    head.append(" %d %s " % (f["code"], f["name"]),
                style="bold white on red" if f["active"] else "bold")
    if f["detail"]:
        head.append(" " + _value(f["detail"]))
    g.add_row("fault", head)
    if f["active"]:
        when = "at %.1f s" % (f["t_ms"] / 1000.0) if f["t_ms"] is not None else ""
        if snap["fix_in_ms"] is not None:
            when += ", the technician comes in %.1f s" % (snap["fix_in_ms"] / 1000.0)
        g.add_row("", Text(when.lstrip(", "), style="red"))
    else:
        g.add_row("", Text("cleared at %.1f s, back to %s" % (f["cleared_t"] / 1000.0,
                                                             f["resume"] or "?"), style="green"))
    g.add_row("cause", f["cause"])
    g.add_row("fix", f["fix"])
    return Panel(g, title="fault", title_align="left",
                 border_style="red" if f["active"] else "")


def _events_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    t = Table.grid(padding=(0, 2))
    t.add_column(justify="right", style="dim", no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_column(no_wrap=True, overflow="ellipsis")
    for e in snap["events"]:
        if e["host"]:
            name = Text("> " + e["name"], style="italic cyan")
        elif e["name"] == "fault":
            name = Text(e["name"], style="bold red")
        else:
            name = Text(e["name"], style=STATE_STYLE.get(e["fields"].get("state"), "bold"))
        t.add_row("%.3f" % (e["t"] / 1000.0), name, fields_text(e["fields"]))
    for _ in range(EVENTS_SHOWN - len(snap["events"])):
        t.add_row("", "", "")
    return Panel(t, title="link: last events (virtual s; > the host's requests)",
                 title_align="left")


# -- running it ---------------------------------------------------------------------

def run(args, out):
    """Returns the exit code."""
    from host_tools.link_client import LinkClient
    from host_tools.vtable.launcher import SimTable

    live = not args.plain and out.isatty()
    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            sim = SimTable(seed=args.seed, faults=args.fault, realtime=True, speed=args.speed)
        except ValueError as e:            # a bad --fault
            print("tableview: %s" % e, file=sys.stderr)
            return 2
        with sim:
            with LinkClient(sim.link_path) as link:
                view = ViewState(args.seed, args.speed, sim.code, args.cycles)
                if live:
                    return _run_live(sim, link, view, args, stop, out)
                return _run_plain(sim, link, view, args, stop, out)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _loop(sim, link, demo, stop, frame=None):
    """Events and actions until Ctrl-C, --cycles, or the table stops."""
    demo.begin()
    next_frame = 0.0
    while not stop.is_set() and not demo.done:
        ev = link.next_event(timeout=0.02)
        while ev is not None:
            demo.on_event(ev)
            ev = link.next_event(timeout=0)
        demo.tick()
        if stop.is_set():
            break
        if not sim.alive:
            return "the virtual table stopped: %s" % sim.exit_reason
        if frame is not None and time.monotonic() >= next_frame:
            next_frame = time.monotonic() + FRAME_S
            frame()
    return None


def _cycles(n):
    return "1 cycle" if n == 1 else "%d cycles" % n


def _run_plain(sim, link, view, args, stop, out):
    def write(line):
        out.write(line + "\n")
        out.flush()

    def echo(entry, extra):
        for line in plain_lines(entry, extra):
            write(line)

    write("# virtual table, seed %s, speed %gx, firmware %s" % (args.seed, args.speed, sim.code))
    demo = Demo(sim, link, view, args.hand, args.fix_after, echo=echo)
    try:
        problem = _loop(sim, link, demo, stop)
    except BrokenPipeError:                # e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        return 0
    if problem:
        print("tableview: %s\n%s" % (problem, sim.firmware_log()[-2000:]), file=sys.stderr)
        return 1
    write("# stopped after %s at %.3f s virtual" % (_cycles(view.cycles), sim.table.now / 1000.0))
    return 0


def _run_live(sim, link, view, args, stop, out):
    from rich.console import Console
    from rich.live import Live

    console = Console(file=out)
    demo = Demo(sim, link, view, args.hand, args.fix_after)
    with Live(console=console, auto_refresh=False, transient=False) as live:
        def frame():
            live.update(render(snapshot(sim.table, view), console.width), refresh=True)
        frame()
        problem = _loop(sim, link, demo, stop, frame)
        frame()
    if problem:
        console.print("[red]%s[/]" % problem)
        print(sim.firmware_log()[-2000:], file=sys.stderr)
        return 1
    console.print("stopped after %s at %s virtual" % (_cycles(view.cycles), _clock(sim.table.now)))
    return 0


def parser():
    ap = argparse.ArgumentParser(prog="python -m host_tools.tableview",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="virtual table seed (default 0)")
    ap.add_argument("--speed", type=float, default=DEFAULT_SPEED,
                    help="virtual seconds per wall second (default %g)" % DEFAULT_SPEED)
    ap.add_argument("--cycles", type=int, default=None, metavar="N",
                    help="stop after N cycles (default: until Ctrl-C)")
    ap.add_argument("--hand", type=float, default=HAND_S, metavar="S",
                    help="virtual seconds a hand lasts (default %g)" % HAND_S)
    ap.add_argument("--fix-after", type=float, default=FIX_AFTER_S, metavar="S",
                    help="virtual seconds before a technician repairs a fault (default %g)"
                    % FIX_AFTER_S)
    ap.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG]",
                    help="inject a virtual table fault at power-on, repeatable")
    ap.add_argument("--plain", action="store_true", help="plain lines, one per link event")
    return ap


def main(argv=None, out=None):
    ap = parser()
    args = ap.parse_args(argv)
    if not args.speed > 0:
        ap.error("--speed must be > 0")
    if args.cycles is not None and args.cycles < 1:
        ap.error("--cycles must be at least 1")
    try:
        return run(args, out or sys.stdout)
    except LinkError as e:
        print("tableview: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
