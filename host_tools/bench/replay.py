"""The rules core's replay speed and heap (engine_core/tests/bench_replay)
on CPython and on MicroPython, each as a subprocess from the code root.

A few seeded full hands (host_tools.sim.hand_script, with kongs) are written
to a temporary JSON-lines file; MicroPython runs the mpy-cross tree `make
mpy` builds (build/mpy) when it is there and up to date, as the board
would; otherwise, or with `source`, the .py sources."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from host_tools.sim.hand_script import random_hand
from host_tools.image.mpenv import ROOT, code_root, micropython_binary

MODULE = "engine_core.tests.bench_replay"
SEEDS = (1, 2, 3, 4, 5)
RULESET = "fuzhou144"
KONG_RATE = 0.04


def write_hands(path):
    hands = []
    with open(path, "w") as f:
        for seed in SEEDS:
            scn, _hand = random_hand(seed, RULESET, kong_rate=KONG_RATE)
            f.write(json.dumps(scn) + "\n")
            hands.append({"seed": seed, "events": len(scn["events"]),
                          "kongs": sum(1 for e in scn["events"] if e["op"] == "kong")})
    return hands


def run_bench(cmd, cwd, hands_file, runs):
    argv = [str(c) for c in cmd] + ["-m", MODULE, str(hands_file)]
    if runs:
        argv.append(str(runs))
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s"
                           % (" ".join(argv[:1] + argv[1:3]), p.returncode, p.stderr.strip()))
    return json.loads(p.stdout.strip().splitlines()[-1])


def measure(source=False, runs_cpython=0, runs_micropython=0):
    """Figures replay_ms_cpython, replay_ms_micropython (medians) and
    micropython_hand_heap_bytes; raises RuntimeError when a run failed."""
    mp = micropython_binary()
    mp_cwd, mp_code = code_root(source)
    results, errors = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        hands_file = Path(tmp) / "hands.jsonl"
        hands = write_hands(hands_file)
        for name, cmd, cwd, runs in (
                ("cpython", [sys.executable], ROOT, runs_cpython),
                ("micropython", [mp], mp_cwd, runs_micropython)):
            if name == "micropython" and not mp.exists():
                errors.append("MicroPython: no binary next to %s" % Path(sys.executable).name)
                continue
            try:
                results[name] = run_bench(cmd, cwd, hands_file, runs)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                errors.append("%s: %s" % (name, e))
    cpy = results.get("cpython") or {}
    mpy = results.get("micropython") or {}
    figures = {
        "replay_ms_cpython": cpy.get("replay_ms_median"),
        "replay_ms_micropython": mpy.get("replay_ms_median"),
        "micropython_hand_heap_bytes": mpy.get("hand_state_heap_bytes"),
    }
    details = {"hands": {"ruleset": RULESET, "kong_rate": KONG_RATE, "seeds": hands},
               "micropython_code": mp_code, "cpython": cpy or None, "micropython": mpy or None}
    notes = []
    n_events = [h["events"] for h in hands]
    notes.append("replay: %d hands of %s (seeds %s), %d-%d events each, %d kongs in all; "
                 "CPython %s %d runs, MicroPython %s %s runs (%s)"
                 % (len(hands), RULESET, ",".join(str(s) for s in SEEDS), min(n_events),
                    max(n_events), sum(h["kongs"] for h in hands), cpy.get("version", "?"),
                    cpy.get("runs", 0), mpy.get("version", "?"), mpy.get("runs", 0), mp_code))
    if mpy.get("hands"):
        worst = max(mpy["hands"], key=lambda h: h.get("replay_alloc_bytes_gc_off", 0))
        notes.append("replay heap with the GC off (worst hand): %d B allocated by replay(),"
                     " %d B by build()+apply() alone, %d B kept by its states"
                     % (worst["replay_alloc_bytes_gc_off"], worst["apply_alloc_bytes_gc_off"],
                        worst["states_heap_bytes"]))
    details["notes"] = notes
    if errors:
        raise PartialError("; ".join(errors), figures, details)
    return figures, details


class PartialError(RuntimeError):
    """A group that measured some figures and failed others."""

    def __init__(self, message, figures, details):
        super().__init__(message)
        self.figures = figures
        self.details = details
