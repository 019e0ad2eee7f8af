"""The heap the firmware needs (MicroPython unix port, 64-bit): the
smallest `--heap` in which one cycle (`mjctl --sim --seed 3 --heap N
cycle`) and one whole hand (`mjctl --sim --seed 4 --heap N hand`) both
complete, to 1 KB; fragmentation included, so a strict form of the peak.

The cycle is bisected over [LO, HI] first (a failing boot ends as soon as
the MicroPython process dies, about 0.3 s; a cycle takes under 1 s); the
hand, which needs at least what the cycle needs, is then searched upwards
from there (galloping: 1, 2, 4 KB above, then bisected), a few runs of a
few seconds. Both searches assume that a run which passes in N bytes passes
in more; the hand is also run at exactly 64 KB (hand_passes_64k).

peak_heap_bytes_esp32_est: the same heap on an ESP32, estimated from the
peak and the boot's parts (host_tools.bench.heapcost.run: its live heap,
byte data, names; stats.esp32_heap says how), with its pessimistic bound
in the details. Reported, not a target: no 32-bit MicroPython runs here."""

import time

from host_tools.bench import heapcost
from host_tools.bench.simrun import passes
from host_tools.bench.stats import bisect_min, esp32_heap, gallop_min
from host_tools.mjctl import run_cycle, run_hand
from host_tools.vtable.hand_players import HandPlayers

KB = 1024
LO, HI = 48 * KB, 160 * KB
CYCLE_SEED, HAND_SEED = 3, 4
HAND_64K = 64 * KB
CYCLE_WALL_S = 30.0
HAND_WALL_S = 60.0


def cycle_ok(heap, seed=CYCLE_SEED):
    return passes(lambda sim, link: run_cycle(sim, link, timeout_s=CYCLE_WALL_S)["ok"],
                  seed, heap)


def hand_ok(heap, seed=HAND_SEED):
    players = []                   # seated before the firmware starts

    def play(sim, link):
        return run_hand(sim, link, players[0], timeout_s=HAND_WALL_S)["ok"]
    return passes(play, seed, heap,
                  setup=lambda table: players.append(HandPlayers(table, seed=seed)))


def _timed(fn, log):
    def run(heap):
        t0 = time.perf_counter()
        ok = fn(heap)
        log.append({"heap": heap, "ok": ok, "wall_s": round(time.perf_counter() - t0, 2)})
        return ok
    return run


def measure():
    cycle_runs, hand_runs = [], []
    cycle_min, _ = bisect_min(LO, HI, _timed(cycle_ok, cycle_runs), KB)
    peak = None
    if cycle_min is not None:
        peak, _ = gallop_min(cycle_min, HI, _timed(hand_ok, hand_runs), KB)
    at_64k = [r["ok"] for r in hand_runs if r["heap"] == HAND_64K]
    hand_64k = at_64k[0] if at_64k else _timed(hand_ok, hand_runs)(HAND_64K)
    figures = {"peak_heap_bytes": peak, "hand_passes_64k": hand_64k}
    details = {"range": [LO, HI], "resolution": KB, "cycle_seed": CYCLE_SEED,
               "hand_seed": HAND_SEED, "cycle_min_bytes": cycle_min,
               "cycle_runs": cycle_runs, "hand_runs": hand_runs,
               "port": "MicroPython unix port, 64-bit (an ESP32's objects are about half)"}
    if peak is not None:               # the boot's parts, for the ESP32's estimate
        parts = heapcost.run()[1]
        est, upper = esp32_heap(peak, parts["live"], parts["buffers"], parts["name_pools"],
                                parts["name_text"])
        figures["peak_heap_bytes_esp32_est"] = est
        details["esp32_estimate"] = dict(parts, upper_bytes=upper)
    if peak is None:
        details["note"] = "no heap up to %d B completed both runs" % HI
    return figures, details
