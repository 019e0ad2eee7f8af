"""`make bench`: the rules core's speed and heap against their targets.

    python -m host_tools.bench [--source] [--runs-cpython N] [--runs-micropython N]

Plays a few seeded full hands (host_tools.hand_script, with kongs), writes
them to a temporary JSON-lines file, and runs engine_core/tests/bench_replay
on CPython and on MicroPython (the `micropython` next to this interpreter),
each as a subprocess from the project root. MicroPython runs the mpy-cross
tree `make mpy` builds (build/mpy) when it is there and up to date, as the
board would; otherwise, or with --source, the .py sources.

Prints a table, figures next to targets with PASS or OVER, and writes
bench.json in the project root. It is a report: the exit code is 0 even
when a figure is over its target; it is 1 only when a run failed.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from host_tools.hand_script import random_hand
from host_tools.mpenv import ROOT, code_root, micropython_binary

MODULE = "engine_core.tests.bench_replay"
SEEDS = (1, 2, 3, 4, 5)
RULESET = "fuzhou144"
KONG_RATE = 0.04

# (key in bench.json, label, unit, target); a figure passes when <= target.
TARGETS = (
    ("cpython_replay_ms", "CPython: replay one hand, median", "ms", 5.0),
    ("micropython_replay_ms", "MicroPython: replay one hand, median", "ms", 50.0),
    ("micropython_hand_heap_bytes", "MicroPython: heap of one hand's state", "B", 4096),
)


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


def verdict(value, target):
    if value is None:
        return "n/a"
    return "PASS" if value <= target else "OVER"


def fmt(value, unit, digits=3):
    if value is None:
        return "-"
    if unit == "B":
        return "%d B" % value
    return "%.*f ms" % (digits, value)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", action="store_true",
                    help="run MicroPython on the .py sources even if build/mpy is there")
    ap.add_argument("--runs-cpython", type=int, default=0, help="runs per hand (default 200)")
    ap.add_argument("--runs-micropython", type=int, default=0, help="runs per hand (default 50)")
    args = ap.parse_args(argv)

    mp = micropython_binary()
    mp_cwd, mp_code = code_root(args.source)

    with tempfile.TemporaryDirectory() as tmp:
        hands_file = Path(tmp) / "hands.jsonl"
        hands = write_hands(hands_file)
        results = {}
        failed = False
        for name, cmd, cwd, runs in (
                ("cpython", [sys.executable], ROOT, args.runs_cpython),
                ("micropython", [mp], mp_cwd, args.runs_micropython)):
            if name == "micropython" and not mp.exists():
                print("MicroPython: no binary next to %s; skipped" % Path(sys.executable).name)
                results[name] = None
                failed = True
                continue
            try:
                results[name] = run_bench(cmd, cwd, hands_file, runs)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                print("%s: %s" % (name, e), file=sys.stderr)
                results[name] = None
                failed = True

    cpy = results.get("cpython") or {}
    mpy = results.get("micropython") or {}
    figures = {
        "cpython_replay_ms": cpy.get("replay_ms_median"),
        "micropython_replay_ms": mpy.get("replay_ms_median"),
        "micropython_hand_heap_bytes": mpy.get("hand_state_heap_bytes"),
    }
    report = {
        "hands": {"ruleset": RULESET, "kong_rate": KONG_RATE, "seeds": hands},
        "micropython_code": mp_code,
        "figures": figures,
        "targets": {k: t for k, _label, _unit, t in TARGETS},
        "verdicts": {k: verdict(figures[k], t) for k, _label, _unit, t in TARGETS},
        "cpython": cpy or None,
        "micropython": mpy or None,
    }

    n_events = [h["events"] for h in hands]
    print("rules-core bench: %d hands of %s (seeds %s), %d-%d events each, %d kongs in all"
          % (len(hands), RULESET, ",".join(str(s) for s in SEEDS), min(n_events),
             max(n_events), sum(h["kongs"] for h in hands)))
    if cpy:
        print("CPython %s: %d runs; MicroPython %s: %s"
              % (cpy.get("version"), cpy.get("runs", 0), mpy.get("version", "?"), mp_code))
    print()
    print("%-40s %10s %10s" % ("", "measured", "target"))
    for key, label, unit, target in TARGETS:
        v = figures[key]
        print("%-40s %10s %10s   %s" % (label, fmt(v, unit), "<= " + fmt(target, unit, 0),
                                      verdict(v, target)))
    print()
    for name, r in (("CPython", cpy), ("MicroPython", mpy)):
        if r:
            print("%-12s replay p90 %.3f ms over %d runs" % (name, r["replay_ms_p90"], r["runs"]))
    if mpy and mpy.get("hands"):
        worst = max(mpy["hands"], key=lambda h: h.get("replay_alloc_bytes_gc_off", 0))
        print("MicroPython heap of one replay with the GC off (worst hand): %d B allocated"
              " by replay(), %d B by build()+apply() alone, %d B kept by its states"
              % (worst["replay_alloc_bytes_gc_off"], worst["apply_alloc_bytes_gc_off"],
                 worst["states_heap_bytes"]))
        print("(unix port, 64-bit: heap figures are in its 32-byte blocks; the board's"
              " 32-bit port uses smaller objects and 16-byte blocks)")

    over = [k for k, v in report["verdicts"].items() if v == "OVER"]
    if over:
        print()
        print("OVER TARGET: %s" % ", ".join(over))
    with open(ROOT / "bench.json", "w") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    print("wrote bench.json")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
