"""Reading the table and the view into a plain dict, and a cycle's and a
hand's figures in words (the plain lines are texts.events)."""

import time

from engine_core import tiles
from host_tools.texts import t


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
    walls = _walls_in_play(table)
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
        "hand": dict(view.hand) if view.hand else None,
        "hand_events": [dict(e) for e in view.hand_events],
        "result": dict(view.result) if view.result else None,
        "hands": view.hands,
        "draws": view.draws,
        "fix_in_ms": None if view.fix_at is None else max(0, view.fix_at - now),
        "lanes": _lanes(table),
        "plate": _plate(table.plate),
        "lifters": _lifters(table),
        "in_play": [sum(w) for w in walls],
        "walls": walls,
        "display": _display(table.display),
        "keys": _keys(table),
        "buzzer": _buzzer(table),
        "fault": dict(view.fault) if view.fault else None,
        "injected": table.active_faults,
        "events": [dict(e) for e in view.events],
    }


def _lanes(table):
    cap = 2 * table.stacks
    return [{"seat": l.side, "tiles": len(l.wall.tiles), "cap": cap, "feed": bool(l.feed),
             "stacking": l.stacking(), "chute": l.chute is not None, "jammed": l.jammed}
            for l in table.lanes]


def _plate(plate):
    return {"turning": plate.turning, "duty": plate.duty, "stalled": plate.stalled,
            "revolutions": plate.revolutions, "phase": plate.phase / plate.rev_units,
            "tiles": len(plate.queue)}


def _lifters(table):
    """Each lifter: where it is (0 bottom .. 1 top), which way it moves
    (None at an end it is driven against), its switches and trips."""
    lifters = []
    for lf in table.lifters:
        d = lf.direction()
        moving = "up" if d > 0 and lf.pos < lf.top else "down" if d < 0 and lf.pos > 0 else None
        lifters.append({"side": lf.side, "pos": lf.pos / lf.top, "moving": moving,
                        "at_top": lf.at_top, "at_bottom": lf.at_bottom, "stuck": lf.stuck,
                        "driven": bool(lf.up or lf.down), "trips": lf.cycles})
    return lifters


def _display(disp):
    gold = None
    if disp.gold != 255:                   # 255: no gold tile shown
        gold = tiles.CODES[disp.gold] if disp.gold < len(tiles.CODES) else "?%d" % disp.gold
    return {"gold": gold, "dice": disp.dice, "dealer": disp.dealer_seat,
            "streak": disp.dealer[1], "text": disp.text, "unplugged": disp.unplugged,
            "count": disp.count, "alert": disp.alert}


def _keys(table):
    """Each seat's key: held down now, and when it was last pressed."""
    presses = list(table.players.presses)
    keys = []
    for seat, pin in enumerate(table.players.pins):
        last = None
        for t, s in reversed(presses):
            if s == seat:
                last = t
                break
        keys.append({"seat": seat, "down": bool(table.reported.get(pin)), "last_press": last})
    return keys


def _buzzer(table):
    buzz = list(table.buzzer)
    beeps = [t for t, value in buzz if value]
    return {"on": bool(buzz and buzz[-1][1]), "beeps": len(beeps),
            "last_beep": beeps[-1] if beeps else None}


def _walls_in_play(table):
    """Tiles left in each stack of the walls in play: per side, 18 counts
    (0..2), stack k at index k (slot = (side * 18 + k) * 2 + layer)."""
    n = table.stacks
    walls = []
    for side in range(4):
        counts = [0] * n
        for slot in list(table.top_walls[side]):
            counts[(slot >> 1) % n] += 1
        walls.append(counts)
    return walls


# -- plain text -------------------------------------------------------------------

def cycle_text(c):
    """A cycle's figures in words."""
    out = t("view.cycle", n=c["n"], a=c["dice"][0], b=c["dice"][1], dealer=c["dealer"])
    if c["table_time_s"] is not None:
        out += t("view.cycle.time", s=c["table_time_s"])
        if c["lower_bound_s"]:
            out += t("view.lower_bound", s=c["lower_bound_s"],
                     over=100.0 * (c["table_time_s"] / c["lower_bound_s"] - 1))
    return out


def result_text(n, r):
    """A hand's result in words (a `result` event's fields)."""
    who = t("hand.draw") if r["winner"] is None else t("hand.won", seat=r["winner"])
    return t("view.hand_result", n=n, who=who, dealer=r["dealer"], streak=r["streak"])
