"""The heap the firmware needs, measured on what ships: the smallest
`-X heapsize` of the twin (the firmware frozen into the unix port built
32-bit, as on the board) in which each run completes, to RESOLUTION bytes,
fragmentation included:

* image_heap_cycle_bytes: one table cycle (`mjctl --sim --seed 3 --heap N cycle`);
* image_heap_hand_bytes: one whole hand by virtual players (seed 4);
* image_heap_resume_bytes: a hand the power cuts 60 virtual seconds after
  its deal began, brought back at boot (controller/resume.py) and played to
  its end, every state after the resume the replay's (seed 4);
* image_heap_recut_bytes: a cycle the power cuts twice, once while its
  set is built (60 tiles stacked) and once halfway up its lift, each
  resumed by the technician's clear (controller/resume.py: the lanes read at
  boot, the walls read at the top after the lift), then its hand played
  to its end, every state the replay's (seed 4);
* image_heap_service_bytes: a technician's visit at idle: the self-test,
  an RFID scan and audit, a config change, the session closed (seed 3);
* mpy_deploy_heap_cycle_bytes: the cycle again from the .mpy files of a
  development deploy on the unfrozen 32-bit build, the bytecode in the heap;
* image_heap_cycle_telemetry_bytes, and the hand's, resume's and service
  visit's: the same four runs with the telemetry on, publishing to a real
  broker all along (telemetry_heap.py; Debian's mosquitto, `make broker`),
  measured with these by the bench's heap group (cli.py).

Each is bisected over its range, assuming that a run which passes in N
bytes passes in more; a failing boot ends as soon as the MicroPython
process dies. A run passes only if the firmware printed no MemoryError
(an answer dropped for want of heap is a failure too)."""

import time

from host_tools.cli import selftest
from host_tools.bench.simrun import passes
from host_tools.bench.stats import bisect_min
from host_tools.cli.ops import run_cycle, run_hand
from host_tools.image.mpenv import mpy_tree_fresh
from host_tools.sim.hand_players import HandPlayers

KB = 1024
RESOLUTION = 256
IMAGE_RANGE = (8 * KB, 64 * KB)
MPY_RANGE = (32 * KB, 160 * KB)
CYCLE_SEED, HAND_SEED, SERVICE_SEED = 3, 4, 3
CYCLE_WALL_S = 30.0
HAND_WALL_S = 60.0


def clean(sim, link):
    """No MemoryError printed and no answer or event dropped for want of heap."""
    return "MemoryError" not in sim.firmware_log() and link.request("status")["link"]["dropped"] == 0


# Each run as (setup, play): setup(table) before the firmware boots (the
# virtual players, None when there are none), play(sim, link) -> bool once
# it answered hello; `wall_s` bounds each wait (the esp32 port in QEMU,
# esp32.py, runs the same plays at the host's slower pace).

def cycle_run(wall_s=CYCLE_WALL_S):
    return None, lambda sim, link: run_cycle(sim, link, timeout_s=wall_s)["ok"] and clean(sim, link)


def hand_run(seed=HAND_SEED, wall_s=HAND_WALL_S, cut_after_ms=None):
    """A whole hand by virtual players; with `cut_after_ms`, the power cut
    that long after its deal began, the hand resumed at boot and played to
    its end, every state after the resume the replay's."""
    players = []

    def play(sim, link):
        out = run_hand(sim, link, players[0], timeout_s=wall_s)
        resumed = cut_after_ms is None or out["resumed"] is True
        return out["ok"] and resumed and clean(sim, link)

    def setup(table):
        players.append(HandPlayers(table, seed=seed, cut_after_ms=cut_after_ms))
    return setup, play


def cycle_ok(heap, seed=CYCLE_SEED, form="image"):
    setup, play = cycle_run()
    return passes(play, seed, heap, setup=setup, form=form)


def hand_ok(heap, seed=HAND_SEED):
    setup, play = hand_run(seed)
    return passes(play, seed, heap, setup=setup)


RESUME_CUT_MS = 60000


def resume_ok(heap, seed=HAND_SEED):
    setup, play = hand_run(seed, cut_after_ms=RESUME_CUT_MS)
    return passes(play, seed, heap, setup=setup)


RECUT_TILES = 60


class _Recut:
    """Cuts the power once when RECUT_TILES are stacked, and once when the
    walls are halfway up (a device on the virtual table's clock)."""

    def __init__(self, table):
        self.table = table
        self.done = 0
        table.attach(self)

    def walls_up(self, now):
        pass

    def _lifter(self):
        return self.table.lifters[0]

    def next_time(self, now):
        lifter = self._lifter()
        if self.done == 1 and lifter.direction() > 0 and lifter.pos < lifter.top // 2:
            return now + -(-(lifter.top // 2 - lifter.pos) // lifter.down_ms)
        return None

    def run(self, dt):
        pass

    def fire(self, now):
        t = self.table
        lifter = self._lifter()
        if self.done == 0 and sum(len(lane.wall.tiles) for lane in t.lanes) >= RECUT_TILES:
            self.done = 1
            t.power_cut()
        elif self.done == 1 and lifter.direction() > 0 and lifter.pos >= lifter.top // 2:
            self.done = 2
            t.power_cut()


def recut_ok(heap, seed=HAND_SEED):
    players = []

    def play(sim, link):
        from host_tools.cli.ops import public_state, resumed_mismatches
        link.request("start")
        for reason in ("mid_build", "mid_lift"):
            ev = link.wait_event(lambda e: e["ev"] == "fault", HAND_WALL_S)
            if ev.get("detail", {}).get("reason") != reason:
                return False
            link.request("clear")
        link.wait_event(lambda e: e["ev"] == "state" and e["state"] == "dealer", HAND_WALL_S)
        observed = []
        while True:
            ev = link.next_event(timeout=HAND_WALL_S)
            if ev is None or ev["ev"] == "fault":
                return False
            if ev["ev"] == "hand":
                st = public_state(ev)
                st["n"] = ev["n"]
                observed.append(st)
            elif ev["ev"] == "result":
                break
        scenario = players[0].scenario
        return (len(observed) == len(scenario["events"])
                and not resumed_mismatches(observed, scenario, from_start=True)
                and clean(sim, link))

    def setup(table):
        players.append(HandPlayers(table, seed=seed))
        _Recut(table)
    return passes(play, seed, heap, setup=setup)


def service_visit(sim, link, wall_s=CYCLE_WALL_S):
    """The technician's visit: the self-test (its own session), then a
    session with an RFID scan and audit and a config change."""
    if not all(r["pass"] for r in selftest.run(link, sim.key, timeout=wall_s)):
        return False
    session = link.open_service(sim.key)
    link.request("rfid_scan", session=session)
    scanned = link.wait_event(lambda e: e["ev"] == "scanned", wall_s)
    link.request("rfid_audit", session=session)
    link.request("config_set", session=session, key="timings.lift_up_ms", value=4000)
    link.close_service(session)
    return scanned["sides"] == 4 and clean(sim, link)


def service_ok(heap, seed=SERVICE_SEED):
    return passes(service_visit, seed, heap)


def _timed(fn, log):
    def run(heap):
        t0 = time.perf_counter()
        ok = fn(heap)
        log.append({"heap": heap, "ok": ok, "wall_s": round(time.perf_counter() - t0, 2)})
        return ok
    return run


def smallest(fn, lo_hi, runs):
    return bisect_min(lo_hi[0], lo_hi[1], _timed(fn, runs), RESOLUTION)[0]


def measure():
    if not mpy_tree_fresh():           # else the launcher would run the .py sources
        raise RuntimeError("build/mpy is older than the sources: run `make mpy` (make bench does)")
    runs = {"cycle": [], "hand": [], "resume": [], "recut": [], "service": [], "mpy_cycle": []}
    figures = {
        "image_heap_cycle_bytes": smallest(cycle_ok, IMAGE_RANGE, runs["cycle"]),
        "image_heap_hand_bytes": smallest(hand_ok, IMAGE_RANGE, runs["hand"]),
        "image_heap_resume_bytes": smallest(resume_ok, IMAGE_RANGE, runs["resume"]),
        "image_heap_recut_bytes": smallest(recut_ok, IMAGE_RANGE, runs["recut"]),
        "image_heap_service_bytes": smallest(service_ok, IMAGE_RANGE, runs["service"]),
        "mpy_deploy_heap_cycle_bytes": smallest(lambda h: cycle_ok(h, form="mpy"), MPY_RANGE,
                                                runs["mpy_cycle"]),
    }
    details = {"resolution": RESOLUTION, "image_range": IMAGE_RANGE, "mpy_range": MPY_RANGE,
               "seeds": {"cycle": CYCLE_SEED, "hand": HAND_SEED, "resume": HAND_SEED,
                         "recut": HAND_SEED, "service": SERVICE_SEED},
               "resume_cut_ms": RESUME_CUT_MS, "recut_tiles": RECUT_TILES,
               "runs": runs,
               "port": "MicroPython 1.28.0 unix port, 32-bit (gcc -m32), as on an ESP32"}
    return figures, details


if __name__ == "__main__":
    import sys
    what = sys.argv[1]
    fn = {"cycle": cycle_ok, "hand": hand_ok, "resume": resume_ok, "recut": recut_ok,
          "service": service_ok,
          "mpy": lambda h: cycle_ok(h, form="mpy")}[what]
    for h in sys.argv[2:]:
        print(what, h, fn(int(h)))
