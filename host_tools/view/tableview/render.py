"""The rich live view: a snapshot (snapshot.py) in, a renderable out."""

from host_tools.view.tableview.demo import EVENTS_SHOWN, FLASH_MS
from host_tools.texts.events import fields_text, value_text
from host_tools.texts import fault_texts, t as tx, word


# -- the rich view ------------------------------------------------------------------

STATE_STYLE = {"idle": "dim", "building": "bold cyan", "lifting": "bold blue",
               "dealer": "bold yellow", "rolling": "bold magenta", "in_hand": "bold green",
               "fault": "bold white on red", "boot": "dim"}
EVENT_STYLE = {"fault": "bold red", "irregular": "red", "result": "bold yellow",
               "hand": "green"}
PHASE_STYLE = {"dealt": "cyan", "replaced": "cyan", "play": "bold green",
               "final": "bold black on yellow", "draw": "bold white on red"}
HAND_FIRST = ("n", "op", "seat", "kind", "slot", "phase")
MARKS = (("tail", "black on magenta"), ("head", "black on green"),
         ("marker", "black on yellow"))     # the last one wins a stack; labels view.mark.*
SPIN = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
PLATE = "◐◓◑◒"
STACK = "·▄█"                               # a stack in play: 0, 1, 2 tiles left


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
    hand = _hand_panel(snap, narrow=width < 76)
    fault = _fault_panel(snap)
    events = _events_panel(snap)
    if width < 76:
        return Group(header, machine, hand, board, ctl, fault, events)
    grid = Table.grid(padding=(0, 1), expand=True)
    if width < 110:
        grid.add_column(ratio=1)
        grid.add_column(ratio=1)
        grid.add_row(board, ctl)
        return Group(header, machine, grid, hand, fault, events)
    grid.add_column(ratio=3)
    grid.add_column(ratio=2)
    grid.add_row(machine, board)
    grid.add_row(hand, ctl)
    return Group(header, grid, fault, events)


def _header(snap):
    from rich.text import Text
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(" %s " % tx("view.title"), style="bold black on white")
    t.append("  %s " % tx("view.virtual"))
    t.append(clock_text(snap["now_ms"]), style="bold")
    t.append("  " + tx("view.speed", speed=snap["speed"]))
    t.append("  " + tx("view.seed", seed=snap["seed"]))
    state = snap["state"] or "-"
    t.append("  ")
    t.append(" %s " % word("state", state).upper(), style=STATE_STYLE.get(state, "bold"))
    t.append("  " + tx("view.cycles", n=snap["cycles"])
             + ("/%d" % snap["target"] if snap["target"] else ""))
    t.append("   " + tx("view.ctrl_c"), style="dim")
    return t


def _machine_panel(snap):
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    now = snap["now_ms"]
    t = Table(box=None, padding=(0, 0, 0, 1), pad_edge=False, show_edge=False, expand=False,
              header_style="bold dim")
    t.add_column(tx("view.col.seat"), justify="right", style="bold", no_wrap=True, min_width=4)
    t.add_column(tx("view.col.lane"), no_wrap=True, min_width=18)
    t.add_column(tx("view.col.tiles"), justify="right", no_wrap=True, min_width=5)
    t.add_column(tx("view.col.feed"), no_wrap=True, min_width=5)
    t.add_column(tx("label.lifter"), no_wrap=True, min_width=12)
    t.add_column("", no_wrap=True, min_width=6)
    t.add_column(tx("view.col.in_play"), justify="right", no_wrap=True, min_width=7)
    for lane, lf, play in zip(snap["lanes"], snap["lifters"], snap["in_play"]):
        full = lane["tiles"] >= lane["cap"]
        bar = Text(_wall_bar(lane["tiles"], lane["cap"]),
                   style="green" if full else "yellow" if lane["tiles"] else "dim")
        if lane["jammed"]:
            feed = Text(tx("view.feed.jam"), style="bold red")
        elif lane["feed"]:
            feed = Text(("▶ " if (now // 250) % 2 else "▷ ") + tx("switch.on"), style="cyan")
        else:
            feed = Text("  " + tx("switch.off"), style="dim")
        if lf["stuck"]:
            motion = Text(tx("view.lift.stuck"), style="bold red")
        elif lf["moving"] == "up":
            motion = Text("▲ " + tx("view.lift.up"), style="bold blue")
        elif lf["moving"] == "down":
            motion = Text("▼ " + tx("view.lift.down"), style="blue")
        elif lf["at_top"]:
            motion = Text(word("lift", "top"))
        elif lf["at_bottom"]:
            motion = Text(word("lift", "bottom"), style="dim")
        else:
            motion = Text(tx("view.lift.halted"), style="yellow")
        t.add_row(str(lane["seat"]), bar, "%d/%d" % (lane["tiles"], lane["cap"]), feed,
                  Text(_lift_bar(lf["pos"]), style="blue" if lf["moving"] else ""),
                  motion, str(play))
    p = snap["plate"]
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(tx("part.plate") + " ", style="bold")
    if p["stalled"]:
        line.append(tx("view.plate.stalled"), style="bold red")
    elif p["turning"]:
        line.append(PLATE[int(p["phase"] * 4) % 4] + " " + tx("view.plate.turning"), style="cyan")
    else:
        line.append("○ " + tx("view.plate.stopped"), style="dim")
    line.append("   " + tx("view.plate.counts", revolutions=p["revolutions"], tiles=p["tiles"]))
    return Panel(Group(t, line), title=tx("view.machine"), title_align="left")


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
        g.add_row(tx("view.board"), Text(tx("view.board.unplugged"), style="bold red"))
    g.add_row(tx("view.gold"), Text(d["gold"] or "—",
                                    style="bold yellow" if d["gold"] else "dim"))
    dice = d["dice"]
    if dice is None:
        g.add_row(tx("label.dice"), Text("—", style="dim"))
    elif dice[2]:
        spin = SPIN[(now // 100) % len(SPIN)]
        g.add_row(tx("label.dice"), Text("%s %s  %s" % (spin, spin, tx("view.dice.rolling")),
                                       style="bold magenta"))
    else:
        g.add_row(tx("label.dice"), Text("%d + %d = %d" % (dice[0], dice[1], dice[0] + dice[1]),
                                       style="bold"))
    lamps = Text()
    for seat in range(4):
        on = d["dealer"] == seat
        lamps.append("●" if on else "○", style="bold red" if on else "dim")
        lamps.append("%d " % seat, style="bold" if on else "dim")
    if d["dealer"] is not None:
        lamps.append(" " + tx("view.streak", n=d["streak"]))
    g.add_row(tx("label.dealer"), lamps)
    g.add_row(tx("view.count"), _count_text(d))
    g.add_row(tx("view.text"), Text(d["text"] or "—", style="" if d["text"] else "dim"))
    keys = Text()
    for k in snap["keys"]:
        lit = k["down"] or (k["last_press"] is not None and now - k["last_press"] < FLASH_MS)
        keys.append(" %d " % k["seat"], style="bold black on yellow" if lit else "dim reverse")
        keys.append(" ")
    g.add_row(tx("view.keys"), keys)
    b = snap["buzzer"]
    lit = b["on"] or (b["last_beep"] is not None and now - b["last_beep"] < FLASH_MS)
    sound = "♪ " + tx("view.buzzer.beep") if lit else tx("view.buzzer.quiet")
    beeps = tx("punct.paren", text=tx("view.buzzer.beeps", n=b["beeps"]))
    g.add_row(tx("view.buzzer"), Text(sound + " " + beeps, style="bold yellow" if lit else "dim"))
    return Panel(g, title=tx("view.board_panel"), title_align="left")


def _count_text(d):
    """The board's count (drawable, the marker's seat and stack) and its lamp."""
    from rich.text import Text
    t = Text(no_wrap=True, overflow="ellipsis")
    if d["count"] is None:
        t.append("—", style="dim")
    else:
        left, seat, stack = d["count"]
        t.append(tx("view.count.text", left=left, seat=seat, stack=stack))
    if d["alert"] != "none":
        t.append("  ")
        t.append(" %s " % word("alert", d["alert"]), style=PHASE_STYLE[d["alert"]])
    return t


def _controller_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    g = Table.grid(padding=(0, 2))
    g.add_column(style="bold", no_wrap=True)
    g.add_column()
    state = snap["state"] or "-"
    g.add_row(tx("label.state"), Text(word("state", state).upper(), style=STATE_STYLE.get(
        state, "bold").replace("white on red", "red")))
    done = "%d" % snap["cycles"] + (" " + tx("view.of", n=snap["target"]) if snap["target"] else "")
    g.add_row(tx("label.cycles"), done)
    c = snap["last_cycle"]
    if c and c["table_time_s"] is not None:
        text = tx("view.table_time", s=c["table_time_s"])
        if c["lower_bound_s"]:
            text += tx("view.lower_bound", s=c["lower_bound_s"],
                      over=100.0 * (c["table_time_s"] / c["lower_bound_s"] - 1))
        g.add_row(tx("view.last_cycle"), text)
        g.add_row("", tx("view.cycle_dice", a=c["dice"][0], b=c["dice"][1], dealer=c["dealer"]))
    else:
        g.add_row(tx("view.last_cycle"), Text("—", style="dim"))
    if snap["hands"]:
        g.add_row(tx("view.hands"), tx("view.hands.text", ended=snap["hands"],
                                     won=snap["hands"] - snap["draws"], drawn=snap["draws"]))
    if snap["injected"]:
        g.add_row(tx("view.injected"), Text(", ".join(snap["injected"]), style="red"))
    g.add_row(tx("label.firmware"), Text(snap["code"] + (tx("view.restarts", n=snap["restarts"])
                                                       if snap["restarts"] else ""), style="dim"))
    return Panel(g, title=tx("view.controller"), title_align="left")


def _hand_panel(snap, narrow=False):
    """The walls in play, one row a side, one cell a stack (head, tail and
    the marker stack lit), beside what the link said of the hand."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    h = snap["hand"] or {}
    lit = {}
    for key, style in MARKS:
        if h.get(key):
            lit[tuple(h[key])] = style
    walls = Table.grid()
    walls.add_column(no_wrap=True)
    for side, stacks in enumerate(snap["walls"]):
        row = Text("%d " % side, style="bold", no_wrap=True)
        for k, n in enumerate(stacks):
            row.append(STACK[min(n, 2)], style=lit.get((side, k), "" if n else "dim"))
        row.append(" %2d" % sum(stacks), style="dim")
        walls.add_row(row)
    legend = Text("  ", no_wrap=True)
    for key, style in MARKS:
        legend.append(tx("view.mark." + key), style=style)
        legend.append(" ")
    walls.add_row(legend)

    facts = Table.grid(padding=(0, 2), expand=True)
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    gold = h.get("gold") or snap["display"]["gold"]
    facts.add_row(tx("view.gold"), Text(gold or "—", style="bold yellow" if gold else "dim"))
    if h:
        facts.add_row(tx("view.wall"), tx("view.wall.text", wall=h["wall"], reserve=h["reserve"],
                                        drawable=h["drawable"]))
        phase = Text(" %s " % word("view.phase", h["phase"]),
                     style=PHASE_STYLE.get(h["phase"], "bold"))
        phase.append("  " + tx("view.event", n=h["n"]), style="dim")
        facts.add_row(tx("view.phase"), phase)
    else:
        facts.add_row(tx("view.wall"), Text("—", style="dim"))
        facts.add_row(tx("view.phase"), Text(tx("view.no_hand"), style="dim"))
    facts.add_row(tx("view.last"), _hand_events_text(snap["hand_events"]))
    r = snap["result"]
    if r is None:
        facts.add_row(tx("view.result"), Text("—", style="dim"))
    else:
        facts.add_row(tx("view.result"), Text(tx(
            "view.result.text", who=tx("hand.draw") if r["winner"] is None
            else tx("hand.won", seat=r["winner"]), dealer=r["dealer"], streak=r["streak"]),
            style="bold yellow"))
    if narrow:
        body = Group(walls, facts)
    else:
        body = Table.grid(padding=(0, 2))
        body.add_column(no_wrap=True)
        body.add_column()
        body.add_row(walls, facts)
    return Panel(body, title=tx("view.hand_panel"), title_align="left")


def _hand_events_text(events):
    """The last hand events, newest first: op and seat (kind, slot, gold)."""
    from rich.text import Text
    t = Text(no_wrap=True, overflow="ellipsis")
    if not events:
        t.append("—", style="dim")
    for i, e in enumerate(reversed(events)):
        if i:
            t.append(", ", style="dim")
        words = [word("op", e["op"])]
        if "seat" in e:
            words.append(str(e["seat"]))
        if "kind" in e:
            words.append(e["kind"])
        if "slot" in e:
            words.append(tx("view.slot", n=e["slot"]))
        if e["op"] == "reveal_gold" and e.get("gold"):
            words.append(e["gold"])
        if "dice" in e:
            words.append("%d+%d" % tuple(e["dice"]))
        t.append(" ".join(words), style="red" if e["op"] == "irregular" else
                 "bold" if i == 0 else "")
    return t


def _fault_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    f = snap["fault"]
    if f is None:
        return Panel(Text(tx("view.no_fault"), style="dim"), title=tx("view.fault"),
                     title_align="left")
    g = Table.grid(padding=(0, 1))
    g.add_column(style="bold", no_wrap=True)
    g.add_column(overflow="fold")          # Chinese has no spaces to wrap at
    head = Text()
    name, cause, fix = fault_texts(f["code"])
    head.append(" %d %s " % (f["code"], name),
                style="bold white on red" if f["active"] else "bold")
    if f["detail"]:
        head.append(" " + value_text(f["detail"]))
    g.add_row(tx("view.fault"), head)
    if f["active"]:
        when = tx("view.fault.at", s=f["t_ms"] / 1000.0) if f["t_ms"] is not None else ""
        if snap["fix_in_ms"] is not None:
            when += tx("view.fault.technician", s=snap["fix_in_ms"] / 1000.0)
        g.add_row("", Text(when.lstrip(", ，"), style="red"))
    else:
        g.add_row("", Text(tx("view.fault.cleared", s=f["cleared_t"] / 1000.0,
                             state=word("state", f["resume"] or "?")), style="green"))
    g.add_row(tx("fault.cause"), cause)
    g.add_row(tx("fault.fix"), fix)
    return Panel(g, title=tx("view.fault"), title_align="left",
                 border_style="red" if f["active"] else "")


def _events_panel(snap):
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    t = Table.grid(padding=(0, 2), expand=True)
    t.add_column(justify="right", style="dim", no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    for e in snap["events"]:
        if e["host"]:
            name = Text("> " + e["name"], style="italic cyan")
        elif e["name"] in EVENT_STYLE:
            name = Text(e["name"], style=EVENT_STYLE[e["name"]])
        else:
            name = Text(e["name"], style=STATE_STYLE.get(e["fields"].get("state"), "bold"))
        fields = e["fields"]
        if e["name"] == "hand":        # what happened first, the public state after it
            fields = dict({k: fields[k] for k in HAND_FIRST if k in fields}, **fields)
        t.add_row("%.3f" % (e["t"] / 1000.0), name, fields_text(fields))
    for _ in range(EVENTS_SHOWN - len(snap["events"])):
        t.add_row("", "", "")
    return Panel(t, title=tx("view.events"), title_align="left")
