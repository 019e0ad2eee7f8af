"""`make soak`: hand after hand on the virtual table, with faults.

    python -m host_tools.soak [--hands N] [--seed S] [--fault-rate R]
                              [--fuzz-frames N] [--live-burst N] [--json]

One virtual table, the real firmware under MicroPython, players for every
set of walls (`Parlour`). At each new set of walls, with probability R, a
fault is injected at a random moment of the next minute of play (while the
next set is built during a hand, or a hand is followed); when the firmware
reports it, the technician repairs the table and clears the fault. Every
hand the controller followed is compared, event by event, with the rules'
replay of what the players did.

It passes when: no firmware exception (no `firmware_error`, no traceback),
no stuck state (an event at least every `STUCK_S` and a hand's result at
least every `HAND_S` of wall time), no hand
that differs from its replay, and the controller's counters equal the
virtual table's own counts (tiles fed per lane, sets lifted, hands).

The link is fuzzed too (host_tools/linkfuzz.py, issue 6 item 5): after
every hand's result, `--live-burst` mutated, truncated, oversized and
random frames go down the live link in one write, then a `status` that
must be answered, while the table builds and plays on (no restart, no
traceback, garbage counted in status.link); and `--fuzz-frames` frames
(1,000,000 by default) are fed in process to the controller's own link
server, frame reader and request decoder. Both counts are in the summary
(`link_fuzz`).
Prints a summary (or JSON); exit 0 when it passes, 1 when not.
"""

import argparse
import json
import random
import sys
import threading
import time

from engine_core.replay import replay
from host_tools import linkfuzz
from host_tools.link_client import LinkClient, LinkError
from host_tools.mjctl import STATE_KEYS, public_state
from host_tools.vtable.hand_players import Parlour
from host_tools.vtable.launcher import SimTable

STUCK_S = 30.0                 # wall seconds without an event: the table is stuck
HAND_S = 60.0                  # wall seconds without a hand's result: stuck too (a hand
                               # takes about 2 s; events may still come, e.g. refusals)
# Faults the table recovers from by a repair and `clear` (docs/faults.md);
# audit faults and power cuts need the lanes emptied: not injected here.
KINDS = ("lane_jam:0", "lane_jam:1", "lane_jam:2", "lane_jam:3", "plate_stall",
         "rfid_timeout", "display_unplugged")
# Faults after which the technician tips the lanes into the tray before
# `clear` (docs/faults.md, recovery): the walls are built again.
EMPTY_LANES = ("missing_tile", "extra_tile", "unknown_tag", "power_lost")


class Technician:
    """Attached to the virtual table, so that it acts in the table's own
    thread: injects the planned faults at their virtual time, and repairs
    the active one when asked (`repair()` from the host, then wait)."""

    def __init__(self, table, rng, rate):
        self.table = table
        self.rng = rng
        self.rate = rate
        self.planned = None        # (t, kind)
        self.active = None         # the kind injected, until repaired
        self.injected = []         # (t, kind)
        self._asked = False
        self._empty = False
        self.tipped = [0, 0, 0, 0]  # tiles fed, then tipped into the tray, by lane
        self.repaired = threading.Event()
        table.attach(self)

    def repair(self, fault):
        """What the technician does for `fault` (its name), as
        docs/faults.md says: repairs what was injected; after an audit
        fault (a jam just before the others filled leaves tiles on the
        plate: missing_tile) or a cut power, tips the lanes into the tray."""
        self.repaired.clear()
        self._empty = fault in EMPTY_LANES
        self._asked = True

    # -- the table's hooks (its thread) ----------------------------------------

    def walls_up(self, now):
        if self.planned is None and self.active is None and self.rng.random() < self.rate:
            self.planned = (now + self.rng.randrange(1000, 60000), self.rng.choice(KINDS))

    def dice_shown(self, now, a, b):
        pass

    def next_time(self, now):
        if self._asked:
            return now
        return self.planned[0] if self.planned else None

    def run(self, dt):
        pass

    def fire(self, now):
        if self._asked:
            self._asked = False
            if self._empty:
                # The tiles it tips back were fed but will never be lifted:
                # the controller counts tiles fed by the walls it lifts.
                for n, lane in enumerate(self.table.lanes):
                    self.tipped[n] += sum(1 for t in lane.wall.tiles if t is not None)
                    self.tipped[n] += lane.chute is not None
                self.table.technician_empties_lanes()
            if self.active is not None:
                self.table.clear_fault(self.active)
                self.active = None
            self.repaired.set()
        if self.planned is not None and now >= self.planned[0]:
            kind = self.planned[1]
            self.planned = None
            self.table.inject(kind)
            self.active = kind
            self.injected.append((now, kind))


def soak(hands, seed=1, fault_rate=0.1, log=None, fuzz_frames=0, live_burst=50):
    """Play `hands` hands; the summary dict (its "ok": it passed).
    live_burst: fuzzed frames on the link after each hand's result;
    fuzz_frames: frames fed in process to the link server (linkfuzz)."""
    rng = random.Random(seed)
    fuzz_rng = random.Random("soak-linkfuzz:%s" % seed)
    out = {"hands": 0, "mismatches": 0, "faults": 0, "stuck": 0, "firmware_errors": 0,
           "results": {"win": 0, "draw": 0}, "seed": seed, "fault_rate": fault_rate}
    live = {"frames": 0, "bursts": 0, "answered": 0, "failures": []}
    t0 = time.monotonic()
    with SimTable(seed=seed) as sim:
        parlour = Parlour(sim.table, seed)
        tech = Technician(sim.table, rng, fault_rate)
        with LinkClient(sim.link_path) as link:
            link.hello()
            link_before = link.request("status")["link"]
            link.request("start")
            observed = []
            last = []                  # the last events, for a stuck table's report
            hand_at = time.monotonic()
            while out["hands"] < hands:
                ev = link.next_event(timeout=STUCK_S)
                if ev is None or time.monotonic() - hand_at > HAND_S:
                    out["stuck"] += 1
                    out["stuck_status"] = link.request("status")
                    out["stuck_events"] = last
                    break
                last = (last + [ev])[-12:]
                name = ev["ev"]
                if name == "fault":
                    out["faults"] += 1
                    out["firmware_errors"] += ev["name"] == "firmware_error"
                    if log:
                        log("fault %s at %d ms: %s" % (ev["name"], ev["t"], ev["detail"]))
                    tech.repair(ev["name"])
                    if not tech.repaired.wait(STUCK_S):
                        out["stuck"] += 1
                        break
                    link.request("clear")
                elif name == "hand":
                    if ev["n"] == 0:
                        observed = []
                    observed.append(public_state(ev))
                elif name == "result":
                    want = replay(parlour.hands[-1].scenario)
                    same = len(want) == len(observed) and all(
                        {k: a[k] for k in STATE_KEYS} == {k: b[k] for k in STATE_KEYS}
                        for a, b in zip(observed, want))
                    out["mismatches"] += not same
                    out["results"]["draw" if ev["winner"] is None else "win"] += 1
                    out["hands"] += 1
                    hand_at = time.monotonic()
                    if live_burst:
                        _live_fuzz(link, fuzz_rng, live_burst, live)
                    if log and out["hands"] % 50 == 0:
                        log("%d hands, %d faults" % (out["hands"], out["faults"]))
            # Compare where both count the same tiles: the controller counts
            # the tiles of the walls it lifts when the lift begins, the table
            # the tiles fed into the lanes. After the last result the next
            # set may be still building or rising; with the walls up (the
            # dealer's turn) the lanes are empty until the dice are shown.
            st = link.request("status")
            if st["state"] in ("building", "lifting"):
                link.wait_event(lambda e: e["ev"] == "state" and e["t"] >= st["uptime"]
                                and e["state"] == "dealer", timeout=120)
            counters = link.request("counters")
            link_after = link.request("status")["link"]
        table = sim.table.counters()
        out["restarts"] = sim.restarts
        live["garbage"] = link_after["garbage"] - link_before["garbage"]
        live["bad_crc"] = link_after["bad_crc"] - link_before["bad_crc"]
        live["errors"] = link_after["errors"] - link_before["errors"]
        out["injected"] = len(tech.injected)
        out["traceback"] = "Traceback" in sim.firmware_log()
        out["counters"] = {k: counters[k] for k in ("cycles", "hands", "lifts", "tiles_fed")}
        out["table_counts"] = {"tiles_fed": [fed - back for fed, back in
                                             zip(table["tiles_fed"], tech.tipped)],
                               "tipped": tech.tipped,
                               "lifts": table["lifter_cycles"][0],
                               "firmware_errors": table["firmware_errors"]}
        out["virtual_s"] = round(sim.table.now / 1000.0, 1)
    out["wall_s"] = round(time.monotonic() - t0, 1)
    live["ok"] = (live["answered"] == live["bursts"] and not live["failures"]
                  and (not live["frames"] or live["garbage"] > 0))
    out["link_fuzz"] = {"live": live}
    if fuzz_frames:
        if log:
            log("link fuzz: %d frames in process" % fuzz_frames)
        f = linkfuzz.inprocess(fuzz_frames, seed)
        f["failures"] = f["failures"][:3]
        out["link_fuzz"]["inprocess"] = f
    out["link_fuzz"]["frames"] = live["frames"] + (fuzz_frames and out["link_fuzz"]["inprocess"]["frames"])
    fuzz_ok = live["ok"] and (not fuzz_frames or out["link_fuzz"]["inprocess"]["ok"])
    out["counters_equal"] = (out["counters"]["tiles_fed"] == out["table_counts"]["tiles_fed"]
                             and out["counters"]["lifts"] == out["table_counts"]["lifts"]
                             and out["counters"]["hands"] == out["hands"])
    out["ok"] = (out["hands"] == hands and not out["mismatches"] and not out["stuck"]
                 and not out["firmware_errors"] and not out["traceback"]
                 and not out["table_counts"]["firmware_errors"] and out["counters_equal"]
                 and not out["restarts"] and fuzz_ok)
    return out


def _live_fuzz(link, rng, n, live):
    """n fuzzed frames on the live link, then a status: it must be answered."""
    try:
        st = linkfuzz.live_burst(link, rng, n)
        live["answered"] += st["ok"] is True
    except LinkError as e:
        live["failures"].append("after %d frames: %s" % (live["frames"] + n, e))
    live["frames"] += n
    live["bursts"] += 1


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.soak", description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fault-rate", type=float, default=0.1, metavar="R",
                    help="chance of a fault at each new set of walls (default 0.1)")
    ap.add_argument("--fuzz-frames", type=int, default=1000000, metavar="N",
                    help="frames fuzzed in process (the link server; default 1,000,000)")
    ap.add_argument("--live-burst", type=int, default=50, metavar="N",
                    help="fuzzed frames on the live link after each hand (default 50)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    log = None if args.json else (lambda s: print(s, flush=True))
    out = soak(args.hands, args.seed, args.fault_rate, log, args.fuzz_frames, args.live_burst)
    if args.json:
        print(json.dumps(out))
    else:
        print("soak: %(hands)d hands (%(results)s), %(faults)d faults (%(injected)d injected), "
              "%(mismatches)d mismatches, %(stuck)d stuck, %(firmware_errors)d firmware errors; "
              "counters %(counters)s, the table's %(table_counts)s; "
              "%(virtual_s)s s virtual in %(wall_s)s s" % out)
        lf = out["link_fuzz"]
        print("link fuzz: %d frames: live %d in %d bursts (%d answered, garbage %d bytes, "
              "bad CRC %d, errors %d, failures %s)%s" % (
                  lf["frames"], lf["live"]["frames"], lf["live"]["bursts"],
                  lf["live"]["answered"], lf["live"]["garbage"], lf["live"]["bad_crc"],
                  lf["live"]["errors"], lf["live"]["failures"][:3],
                  "; in process %(frames)d (%(bursts)d bursts, valid answered %(valid_answered)d, "
                  "link %(link)s, %(wall_s)s s, failures %(failures)s)" % lf["inprocess"]
                  if "inprocess" in lf else ""))
        if out["stuck"]:
            print("stuck: %s\nlast events: %s" % (out.get("stuck_status"), out.get("stuck_events")))
        print("PASS" if out["ok"] else "FAIL")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
