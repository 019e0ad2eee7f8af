"""Benchmark of the rules core: one full hand replayed, on either interpreter.

    python -m engine_core.tests.bench_replay      HANDS.jsonl [RUNS] [--states]
    micropython -m engine_core.tests.bench_replay HANDS.jsonl [RUNS] [--states]

HANDS.jsonl holds §13 scenarios, one a line (`python -m host_tools.bench`
writes them). This measures; it asserts nothing. For each hand:

- time: `engine_core.replay.replay(scn)`, the replay tool's own code path
  (build the Hand, apply every event, build every public state), RUNS times
  (default 200 on CPython, 50 on MicroPython);
- heap (MicroPython only, from gc.mem_alloc, so in the heap's block units):
    hand_state_heap_bytes   what one hand's state keeps alive: build() and
                            apply() of every event, collected, hand still held;
    replay_alloc_bytes_gc_off  everything one replay() call allocates with the
                            GC off (its states included): an upper bound of
                            the heap the call needs at its peak;
    apply_alloc_bytes_gc_off   the same for build() + apply() alone, no
                            states: what the firmware's event path allocates;
    states_heap_bytes       what the list of states replay() returns keeps.

One JSON object on stdout. Top-level figures pool every hand: the median and
90th percentile of all timed runs (each run is one full hand), the largest
heap of any hand, the most events of any hand; "hands" has each hand's own.
`--states` adds each hand's states from its last timed run (for the tests).
"""

import gc
import json
import sys
import time

from engine_core import replay as _replay
from engine_core.hand import Refused

MICROPYTHON = sys.implementation.name == "micropython"
DEFAULT_RUNS = 50 if MICROPYTHON else 200

if hasattr(time, "ticks_us"):
    def _now():
        return time.ticks_us()

    def _us(t0, t1):
        return time.ticks_diff(t1, t0)
else:
    def _now():
        return time.perf_counter()

    def _us(t0, t1):
        return (t1 - t0) * 1e6


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def p90(xs):
    """Nearest-rank 90th percentile."""
    s = sorted(xs)
    return s[(9 * len(s) + 9) // 10 - 1]


def time_replay(scn, runs):
    """(microseconds of each run, the states of the last run)."""
    replay = _replay.replay
    states = replay(scn)            # warm-up: imports, caches, interning
    gc.collect()
    times = []
    for _ in range(runs):
        t0 = _now()
        states = replay(scn)
        t1 = _now()
        times.append(_us(t0, t1))
    return times, states


def _apply_all(scn):
    hand = _replay.build(scn)
    for ev in scn["events"]:
        try:
            _replay.apply(hand, ev)
        except Refused:
            pass
    return hand


def heap_of_hand(scn):
    """Heap figures of one hand (MicroPython), see the module text."""
    gc.collect()
    a = gc.mem_alloc()
    hand = _apply_all(scn)
    gc.collect()
    b = gc.mem_alloc()
    held = b - a
    phase = hand.phase                     # the hand is still referenced here
    hand = None

    gc.collect()
    gc.disable()
    try:
        a = gc.mem_alloc()
        hand = _apply_all(scn)
        b = gc.mem_alloc()
        hand = None
        apply_alloc = b - a

        gc.collect()
        a = gc.mem_alloc()
        states = _replay.replay(scn)
        b = gc.mem_alloc()
        replay_alloc = b - a
    finally:
        gc.enable()
    gc.collect()
    kept = gc.mem_alloc() - a
    states = None                          # referenced up to here
    return {"hand_state_heap_bytes": held,
            "apply_alloc_bytes_gc_off": apply_alloc,
            "replay_alloc_bytes_gc_off": replay_alloc,
            "states_heap_bytes": kept,
            "final_phase": phase}


def read_scenarios(path):
    out = []
    f = open(path)
    try:
        while True:
            line = f.readline()
            if not line:
                break
            if line.strip():
                out.append(json.loads(line))
    finally:
        f.close()
    return out


def bench(scenarios, runs, keep_states=False):
    pooled = []
    hands = []
    heap_max = None
    for scn in scenarios:
        times, states = time_replay(scn, runs)
        pooled.extend(times)
        h = {"events": len(scn["events"]),
             "replay_ms_median": round(median(times) / 1000, 4),
             "replay_ms_p90": round(p90(times) / 1000, 4)}
        if MICROPYTHON:
            heap = heap_of_hand(scn)
            for k in heap:
                if k != "final_phase":
                    h[k] = heap[k]
            if heap_max is None or heap["hand_state_heap_bytes"] > heap_max:
                heap_max = heap["hand_state_heap_bytes"]
        if keep_states:
            h["states"] = states
        hands.append(h)
    return {
        "interpreter": sys.implementation.name,
        "version": ".".join([str(v) for v in sys.implementation.version[:3]]),
        "code": getattr(_replay, "__file__", "?").replace("\\", "/").split("/")[-1],
        "replay_ms_median": round(median(pooled) / 1000, 4) if pooled else None,
        "replay_ms_p90": round(p90(pooled) / 1000, 4) if pooled else None,
        "runs": len(pooled),
        "runs_per_hand": runs,
        "hand_state_heap_bytes": heap_max,
        "events": max([h["events"] for h in hands]) if hands else 0,
        "hands": hands,
    }


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if not args:
        sys.stderr.write("usage: bench_replay HANDS.jsonl [RUNS] [--states]\n")
        sys.exit(2)
    runs = int(args[1]) if len(args) > 1 else DEFAULT_RUNS
    result = bench(read_scenarios(args[0]), runs, "--states" in argv)
    sys.stdout.write(json.dumps(result))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv)
