"""The operations other tools run on a table over its link: a cycle, a
hand, a fault described, the dice's fairness. mjctl's commands print them;
the bench, the soak, the table view and hw_tests use them as they are."""

import math
import time

from engine_core.replay import from_wire
from firmware.link.codec import LinkError
from host_tools.texts import faults as fault_table
from host_tools.texts import fault_texts

CYCLE_WALL_TIMEOUT_S = 60      # wall-clock guard; virtual time runs far faster
HAND_WALL_TIMEOUT_S = 120


def describe_fault(ev):
    """A fault event with its cause and fix from the firmware's own table,
    in the chosen language (`name` stays the firmware's: scripts match it)."""
    _name, cause, fix = fault_texts(ev["code"])
    return {"code": ev["code"], "name": fault_table.name_of(ev["code"]), "cause": cause, "fix": fix,
            "detail": ev.get("detail", {}), "t_ms": ev.get("t")}


def run_cycle(sim, link, timeout_s=CYCLE_WALL_TIMEOUT_S):
    """One table cycle from `start` to walls up and dice shown (or a fault).
    Returns the cycle's JSON object; `runtime` is what the firmware says it
    runs on (word size, frozen, MicroPython's version)."""
    info = link.hello()
    out = {"ok": False, "table_time_s": None, "lower_bound_s": None, "dice": None,
           "dealer": None, "walls": {"tiles_per_side": None}, "faults": [],
           "runtime": info["runtime"]}
    status = link.request("status")
    if status["fault"]:                    # found at boot: nothing may move
        out["faults"].append(describe_fault(status["fault"]))
        out["firmware"] = {"code": sim.code, "restarts": sim.restarts}
        return out
    link.request("start")
    started = link.wait_event(lambda e: e["ev"] == "state" and e["state"] == "building",
                              timeout=timeout_s)
    while True:
        ev = link.wait_event(lambda e: e["ev"] in ("walls", "dice", "fault"), timeout=timeout_s)
        if ev["ev"] == "walls" and out["walls"]["tiles_per_side"] is None:
            out["walls"]["tiles_per_side"] = ev["tiles_per_side"]
        elif ev["ev"] == "fault":
            out["faults"].append(describe_fault(ev))
            break
        elif ev["ev"] == "dice":
            out["ok"] = True
            out["dice"] = [ev["a"], ev["b"]]
            out["dealer"] = ev["dealer"]
            out["table_time_s"] = round((ev["t"] - started["t"]) / 1000.0, 3)
            bound = sim.table.lower_bound_ms(start_time=started["t"])
            out["lower_bound_s"] = round(bound / 1000.0, 3)
            break
    out["firmware"] = {"code": sim.code, "restarts": sim.restarts}
    return out


def public_state(ev):
    """A `hand` event as engine_core.replay names the state, with the op
    the controller saw."""
    out = {"op": ev["op"]}
    out.update(from_wire(ev))
    return out


def run_hand(sim, link, players, timeout_s=HAND_WALL_TIMEOUT_S, cuts=None):
    """One cycle, then one hand played by `players` (HandPlayers) to its
    result. Returns the hand's JSON object.

    With `players.cut_after_ms` set, the players cut the power that long
    after the deal began (or when `players.cut_on` says; `cuts`: True for a
    cut made otherwise, False for none; host_tools/sim/hand_players.py):
    `observed` then holds the states published before the cut, the
    resumed state (op "resumed") and those after, each with its `n`;
    `"resumed"` says whether the table brought the hand back, `"fallback"`
    the reason it gave when it did not (power_lost's detail), and
    `"replay_ok"` whether every state after the resume is the replay's
    (engine_core.replay)."""
    cycle = run_cycle(sim, link)
    cutting = cuts if cuts is not None else (
        getattr(players, "cut_after_ms", None) is not None
        or getattr(players, "cut_on", None) is not None)
    out = {"ok": False, "result": None, "scenario": None, "observed": [], "cycle": cycle,
           "faults": list(cycle["faults"]), "runtime": cycle["runtime"]}
    if not cycle["ok"]:
        return out
    if cutting:
        out.update({"resumed": None, "fallback": None, "replay_ok": None})
    _follow_hand(link, out, cutting, timeout_s)
    out["scenario"] = players.scenario
    out["players"] = {"result": players.result, "skipped": len(players.skipped),
                      "abandoned": players.abandoned}
    if cutting:
        out["players"]["cuts"] = [list(c) for c in players.cuts]
        out["players"]["taken_while_off"] = [s for _, s in players.off_taken]
    _judge_hand(out, players, cutting)
    return out


def _follow_hand(link, out, cutting, timeout_s):
    """The hand's events into `out` until its result, a fault, or
    `timeout_s` (LinkError); a cut's resume or fall-back as well."""
    deadline = time.monotonic() + timeout_s
    while True:
        # Every event is taken off the queue (the next set's, state changes
        # and the rest would otherwise fill it during a long hand).
        ev = link.next_event(timeout=max(0.0, deadline - time.monotonic()))
        if ev is None:
            raise LinkError("timeout", "the hand did not end in %d s" % timeout_s)
        if ev["ev"] == "hand":
            out["observed"].append(public_state(ev))
            if cutting:
                out["observed"][-1]["n"] = ev["n"]
        elif ev["ev"] == "hand_resumed":
            st = {"op": "resumed"}
            st.update(from_wire(ev))
            st["n"] = ev["n"]
            out["observed"].append(st)
            out["resumed"] = True
        elif ev["ev"] == "irregular":
            out.setdefault("irregular", []).append({"slot": ev["slot"], "reason": ev["reason"]})
        elif ev["ev"] == "fault" and cutting and ev["name"] == "power_lost" \
                and out["resumed"] is None:
            out["resumed"] = False
            out["fallback"] = ev.get("detail", {}).get("reason")
            out["faults"].append(describe_fault(ev))
            return
        elif ev["ev"] == "fault":
            out["faults"].append(describe_fault(ev))
            return
        elif ev["ev"] == "result":
            out["result"] = {"winner": ev["winner"], "draw": ev["winner"] is None,
                             "dealer": ev["dealer"], "wins_in_row": ev["wins_in_row"],
                             "streak": ev["streak"]}
            return


def _judge_hand(out, players, cutting):
    """out["ok"] (and, after a resume, the replay's verdict): the hand ran
    to its result, every scenario event followed, no fault, no player left
    out."""
    if cutting and out["resumed"]:
        out["mismatches"] = resumed_mismatches(out["observed"], players.scenario)
        out["replay_ok"] = not out["mismatches"]
        last = out["observed"][-1] if out["observed"] else {"op": "resumed", "n": 0}
        n_last = last["n"] if last["op"] == "resumed" else last["n"] + 1
        out["ok"] = (not out["faults"] and out["result"] is not None and out["replay_ok"]
                     and n_last == len(players.scenario["events"])
                     and not players.skipped and not players.abandoned)
        return
    if cutting and out["resumed"] is False:
        return
    # No cut in the hand (or one before its dice: rolled again): as ever.
    out["ok"] = (not out["faults"] and out["result"] is not None and players.scenario is not None
                 and len(out["observed"]) == len(players.scenario["events"])
                 and not players.skipped and not players.abandoned)


def resumed_mismatches(observed, scenario, from_start=False):
    """The states from the resume on (`from_start`: all of them, a hand
    that began after a resumed build or lift) that are not the replay's
    after the events its `n` counts (a `hand` event's n is its index: the
    events before it; the resumed state's, the events published so far,
    0: the walls as they stand). [(n, observed, replayed)]."""
    from engine_core.replay import PUBLIC_KEYS, build, state, apply
    hand = build(scenario)
    states = [state(hand)]
    for ev in scenario["events"]:
        apply(hand, ev)
        states.append(state(hand))
    out = []
    after = from_start
    for st in observed:
        after = after or st["op"] == "resumed"
        if not after:
            continue
        # A `hand` event's n is its index (the events before it); the
        # resumed state's, the events published so far.
        n = st["n"] if st["op"] == "resumed" else st["n"] + 1
        want = states[n] if 0 <= n < len(states) else None
        got = {k: st[k] for k in PUBLIC_KEYS}
        if want is None or got != {k: want[k] for k in PUBLIC_KEYS}:
            out.append([n, got, want and {k: want[k] for k in PUBLIC_KEYS}])
    return out


def chi2_p_5(x):
    """P(chi-square with 5 degrees of freedom >= x): the closed form for an
    odd number of degrees (no scipy on the technician's laptop needed)."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3)


def dice_stats(counts):
    """Chi-square of face counts against a fair die, and its p-value."""
    total = sum(counts)
    want = total / 6.0
    chi2 = sum((c - want) ** 2 / want for c in counts)
    return chi2, chi2_p_5(chi2)
