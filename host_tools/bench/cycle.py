"""The table's schedule on the virtual table: one cycle against the
model's lower bound (cycle_overhead, virtual_speedup, the Gantt of one
cycle), and the wait between two hands with two tile sets."""

import time

from host_tools.bench import gantt
from host_tools.bench.simrun import running
from host_tools.bench.stats import median
from host_tools.link.client import LinkError
from host_tools.cli.ops import run_cycle
from host_tools.sim.hand_players import Parlour
from host_tools.sim.rfid import SCAN_SIDE

CYCLE_SEEDS = (1, 2, 3, 4, 5)
HANDS_SEED = 4
TRANSITIONS = 2             # hand ends followed by the next hand's dice
CYCLE_WALL_S = 30.0         # wall-clock guards; a cycle takes under 1 s
HANDS_WALL_S = 90.0


def instrument_rfid(table):
    """Log every RFID request the reader takes ("rfid", side, "scan",
    level) and the end of its antenna read ("rfid", None, "reply") in the
    table's event log, for the Gantt's audit row. Wraps the reader's
    handlers on this instance only; what the table computes is unchanged
    (the reply's 16 ms on the wire are not in the span)."""
    rfid = table.rfid
    request, reply = rfid._request, rfid._reply

    def logged_request(now, cmd, data):
        if cmd == SCAN_SIDE and data:
            table.log_event("rfid", data[0], "scan", data[1] if len(data) > 1 else 0)
        request(now, cmd, data)

    def logged_reply(now, cmd, data):
        table.log_event("rfid", None, "reply", cmd)
        reply(now, cmd, data)
    rfid._request, rfid._reply = logged_request, logged_reply


def _recording(link):
    """Keep every event that link.wait_event hands out (run_cycle takes
    the ones it waits for off the queue)."""
    got = []
    wait = link.wait_event

    def wait_event(pred, timeout=None):
        ev = wait(pred, timeout)
        got.append(ev)
        return ev
    link.wait_event = wait_event
    return got


def _drain(link):
    out = []
    while True:
        ev = link.next_event(timeout=0)
        if ev is None:
            return out
        out.append(ev)


def one_cycle(seed):
    """run_cycle (mjctl --sim --seed N cycle) on a booted table, timed on
    the wall clock, with the table's log, the link events and the bound's
    breakdown."""
    with running(seed=seed, setup=instrument_rfid) as (sim, link):
        got = _recording(link)
        w0 = time.perf_counter()
        out = run_cycle(sim, link, timeout_s=CYCLE_WALL_S)
        wall_s = time.perf_counter() - w0
        log = list(sim.table.log)
        events = sorted(got + _drain(link), key=lambda e: e["t"])
        bound = sim.table.lower_bound(build=0)
        cap = 2 * sim.table.stacks
    if not out["ok"]:
        raise RuntimeError("seed %d: the cycle did not finish: %s" % (seed, out["faults"]))
    start = next(e["t"] for e in events if e["ev"] == "state" and e["state"] == "building")
    return {"seed": seed, "table_time_s": out["table_time_s"],
            "lower_bound_s": out["lower_bound_s"],
            "overhead": out["table_time_s"] / out["lower_bound_s"] - 1,
            "wall_s": wall_s, "speedup": out["table_time_s"] / wall_s,
            "start": start, "log": log, "events": events, "bound": bound, "cap": cap}


def measure_cycles(seeds=CYCLE_SEEDS):
    runs = [one_cycle(s) for s in seeds]
    first = runs[0]
    rows = gantt.cycle_spans(first["log"], first["events"], first["cap"], first["start"])
    end = max(b for _r, _a, b in rows)
    bound = first["bound"]
    chart = gantt.render(rows, first["start"], end,
                         bound_end=bound["start"] + bound["total_ms"] if bound else None)
    figures = {
        "cycle_overhead": median([r["overhead"] for r in runs]),
        "virtual_speedup": median([r["speedup"] for r in runs]),
    }
    details = {
        "cycles": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()
                    if k in ("seed", "table_time_s", "lower_bound_s", "overhead", "wall_s",
                             "speedup")} for r in runs],
        "timeline": {"seed": first["seed"],
                     "spans_s": [(name, round((a - first["start"]) / 1000.0, 3),
                                  round((b - first["start"]) / 1000.0, 3))
                                 for name, a, b in rows],
                     "bound_ms": {k: v for k, v in (bound or {}).items()
                                  if k not in ("start", "finish_at", "build")},
                     "gantt": chart},
    }
    return figures, details


def _first(events, pred, after):
    for e in events:
        if e["t"] >= after and pred(e):
            return e
    return None


def between_hands(seed=HANDS_SEED, transitions=TRANSITIONS):
    """Hands played by virtual players (a Parlour) on a two-set table,
    from `start` until `transitions` hand ends have each been followed by
    the next hand's dice. Returns [(result event, lifting, dealer, rolling,
    dice events), ...] and the table's model figures."""
    with running(seed=seed, setup=lambda table: Parlour(table, seed=seed)) as (sim, link):
        table = sim.table
        if table.config.tile_sets != 2:
            raise RuntimeError("the config has %d tile sets, not 2" % table.config.tile_sets)
        model = {"up_ms": table.lifters[0].up_ms, "down_ms": table.lifters[0].down_ms,
                 "dice_roll_ms": table.config.dice_roll_ms,
                 "reaction_ms": table.players.reaction_ms}
        link.request("start")
        events, results, deadline = [], 0, time.monotonic() + HANDS_WALL_S
        while True:
            ev = link.next_event(timeout=max(0.0, deadline - time.monotonic()))
            if ev is None:
                raise LinkError("timeout", "%d hand ends in %.0f s" % (results, HANDS_WALL_S))
            if ev["ev"] == "fault":
                raise RuntimeError("fault %s during the hands" % ev)
            if ev["ev"] in ("state", "result", "dice"):
                events.append(ev)
            results += ev["ev"] == "result"
            if ev["ev"] == "dice" and results >= transitions:
                break
    out = []
    for res in (e for e in events if e["ev"] == "result"):
        t = res["t"]
        lifting = _first(events, lambda e: e["ev"] == "state" and e["state"] == "lifting", t)
        dealer = _first(events, lambda e: e["ev"] == "state" and e["state"] == "dealer", t)
        rolling = _first(events, lambda e: e["ev"] == "state" and e["state"] == "rolling", t)
        dice = _first(events, lambda e: e["ev"] == "dice", t)
        out.append((res, lifting, dealer, rolling, dice))
    return out, model


def measure_between_hands(seed=HANDS_SEED, transitions=TRANSITIONS):
    found, model = between_hands(seed, transitions)
    waits = []
    for res, lifting, dealer, rolling, dice in found:
        waits.append({
            "hand_end_t_ms": res["t"], "dice_t_ms": dice["t"],
            "wait_s": (dice["t"] - res["t"]) / 1000.0,
            "to_lifting_s": (lifting["t"] - res["t"]) / 1000.0,
            "lift_s": (dealer["t"] - lifting["t"]) / 1000.0,
            "dealer_key_s": (rolling["t"] - dealer["t"]) / 1000.0,
            "roll_s": (dice["t"] - rolling["t"]) / 1000.0,
        })
    # The mechanical minimum between hands with two sets: the next set is
    # already on the platforms at the bottom (built during the hand), so
    # the walls go up (up_ms) and the dice roll (dice_roll_ms). Lowering
    # the platforms happens during the next hand, not in the wait.
    lift_plus_dice = (model["up_ms"] + model["dice_roll_ms"]) / 1000.0
    figures = {
        "wait_between_hands_s": max(w["wait_s"] for w in waits),
        "lift_plus_dice_s": lift_plus_dice,
    }
    details = {"seed": seed, "waits": waits, "model_ms": model,
               "lift_down_up_dice_s": (model["down_ms"] + model["up_ms"]
                                       + model["dice_roll_ms"]) / 1000.0}
    return figures, details
