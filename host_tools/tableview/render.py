"""The rich live view: a snapshot (snapshot.py) in, a renderable out."""

from host_tools.tableview.demo import EVENTS_SHOWN, FLASH_MS
from host_tools.tableview.snapshot import fields_text, value_text


# -- the rich view ------------------------------------------------------------------

STATE_STYLE = {"idle": "dim", "building": "bold cyan", "lifting": "bold blue",
               "dealer": "bold yellow", "rolling": "bold magenta", "in_hand": "bold green",
               "fault": "bold white on red", "boot": "dim"}
SPIN = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PLATE = "◐◓◑◒"


def clock_text(ms):
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
    t.append(clock_text(snap["now_ms"]), style="bold")
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
        head.append(" " + value_text(f["detail"]))
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
