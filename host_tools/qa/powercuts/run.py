"""The power cuts, one after another, on one virtual table: where each
cut falls (idle, in a standing power_lost, or some time after a start,
at a virtual or a wall-clock instant), the wait for the boot after it
and its checks (boot_checks.py), and the technician's repair before the
next start."""

import random
import time

from host_tools.link.client import LinkClient, LinkError
from host_tools.qa.powercuts.boot_checks import HAND_STATES, RESUMABLE, BootChecker
from host_tools.qa.powercuts.follower import WAIT_S, Failure
from host_tools.qa.powercuts.summary import progress_line
from host_tools.sim.hand_players import Parlour
from host_tools.sim.launcher import SimTable

# Virtual ms from a start to the cut, drawn uniformly in one of these spans
# (with its weight): the build, the lift, the dealer and the dice; the
# first hand, with the next set built during it; later hands.
CUT_AFTER_MS = (((200, 40000), 0.40), ((40000, 150000), 0.45), ((150000, 400000), 0.15))
SHARE_IDLE = 0.05               # cuts while idle (no cycle: no power_lost expected)
SHARE_FAULT = 0.05              # cuts in power_lost before `clear` (the marker stays)
SHARE_WALL = 0.0                # cuts in play at a wall-clock instant (--wall-share)
WALL_S = (0.0, 3.0)             # wall seconds after the start: ~0..150 s virtual
STALLED = 10                    # cuts in a row, each > 60 s after a start, with no lift:
                                # the table no longer builds (a failure, not a pass)


def powercuts(cuts, seed=1, log=None, share_idle=SHARE_IDLE, share_fault=SHARE_FAULT,
              share_wall=SHARE_WALL):
    """Cut the power `cuts` times; the summary dict (its "ok": it passed).
    share_idle, share_fault: the chance of a cut while idle, or while the
    last cut's power_lost stands; share_wall: of a cut in play, that it
    comes at a wall-clock instant (SimTable.power_cut_now) rather than at a
    virtual one."""
    rng = random.Random(seed)
    t0 = time.monotonic()
    with SimTable(seed=seed) as sim:
        parlour = Parlour(sim.table, seed)
        with LinkClient(sim.link_path) as link:
            link.hello()
            run = Run(sim, link, rng, log, share_idle, share_fault, share_wall)
            run.parlour = parlour
            _cut_again_and_again(run, cuts, log)
            out = _what_the_host_saw(run, sim)
        out["traceback"] = "Traceback" in sim.firmware_log()
        out["firmware_errors"] = len(sim.table.errors)
        out["virtual_s"] = round(sim.table.now / 1000.0, 1)
    out["seed"] = seed
    out["wall_s"] = round(time.monotonic() - t0, 1)
    out["ok"] = (out["cuts"] == cuts and not out["failures"] and not out["traceback"]
                 and not out["firmware_errors"] and not out["tiles"]["short"])
    return out


def _cut_again_and_again(run, cuts, log):
    """`cuts` cuts, or fewer when one stops the run (a Failure, the link
    lost: in the summary as `stopped`)."""
    try:
        for n in range(cuts):
            run.cut_once(n)
            run.state_at_cut = run.state
            run.cutter.cut_t = None
            if log and (n + 1) % 50 == 0:
                log(progress_line(n + 1, run.out))
    except (Failure, LinkError) as e:
        run.out["failures"].append({"cut": run.out["cuts"], "problems": [
            "stopped: %s" % e]})
        run.out["stopped"] = str(e)


def _what_the_host_saw(run, sim):
    """The summary once the cuts are over: the last events applied, the
    counts the host saw, the tiles at every repair, the last counters."""
    try:
        run.pump()
    except LinkError:
        pass
    run.check_resumed_hand()
    out = run.out
    out["seen"] = dict(run.seen)
    want = sim.table.config.tile_sets * sim.table.rules.n_tiles
    short = [i for i, n in enumerate(run.cutter.tiles) if n != want]
    out["tiles"] = {"want": want, "repairs": len(run.cutter.tiles),
                    "short": len(short), "min": min(run.cutter.tiles, default=want)}
    out["counters"] = {k: run.prev[k] for k in ("cycles", "hands", "lifts")} \
        if run.prev else None
    return out


class Run(BootChecker):
    """The cuts on one table: `cut_once` plans a cut, waits for it and
    for the boot, and checks the boot; `recover` is the technician's
    repair and the next start."""

    def __init__(self, sim, link, rng, log=None, share_idle=SHARE_IDLE, share_fault=SHARE_FAULT,
                 share_wall=SHARE_WALL):
        BootChecker.__init__(self, sim, link, log)
        self.share_wall = share_wall
        self.share_idle = share_idle
        self.share_fault = share_fault
        self.rng = rng
        self.stalled = 0             # cuts in a row long after a start with no lift

    def start(self):
        self.link.request("start")

    def cut_once(self, n):
        delay, wall = self._where_to_cut()
        restarts = self.sim.restarts
        self.pump()
        lifts = self.seen["lifts"]
        if wall:
            self._cut_at_a_wall_clock_instant(restarts)
        else:
            self._cut_at_a_virtual_instant(delay)
        cut_t = self.cutter.cut_t
        self.wall = wall
        self.check_resumed_hand()        # the states seen up to the cut
        self.played = []
        boot = self._wait_for_the_boot(cut_t)
        state_at_cut = self.state_at_cut
        self.check_boot(n, cut_t, state_at_cut, boot, restarts)
        if delay > 60000 and not wall:
            self.stalled = self.stalled + 1 if self.seen["lifts"] == lifts else 0
            if self.stalled >= STALLED:
                raise Failure("the table no longer builds: %d cuts in a row more than 60 s "
                              "after a start with no lift (other faults %s)"
                              % (self.stalled, self.out["other_faults"]))

    def _where_to_cut(self):
        """The table made ready for the next cut (repaired and started, or
        left as it is); the delay in virtual ms to the cut, and whether it
        comes at a wall-clock instant instead."""
        kind = self.rng.random()
        wall = False
        self.pump()
        if self.state in HAND_STATES and kind >= self.share_idle + self.share_fault:
            # A hand resumed after the last cut goes on: cut it again (or
            # the next hand, or the next cycle) somewhere later.
            delay = self.rng.randrange(200, 120000)
        elif kind < self.share_idle and self.state != "idle":
            self.recover(start=False)              # idle: a cut with no cycle marker
            delay = self.rng.randrange(0, 3000)
        elif kind < self.share_idle + self.share_fault and self.state == "fault":
            # The last cut's power_lost stands, nobody cleared it: again.
            delay = self.rng.randrange(0, 1000)
        else:
            self.recover(start=True)
            spans = [span for span, _ in CUT_AFTER_MS]
            span = self.rng.choices(spans, [w for _, w in CUT_AFTER_MS])[0]
            delay = self.rng.randrange(*span)
            wall = self.rng.random() < self.share_wall
        return delay, wall

    def _cut_at_a_wall_clock_instant(self, restarts):
        # Killed at a wall-clock instant, wherever it is: in a tick, in
        # a save, writing an event. The table's time of the cut is the
        # bus thread's, once it has seen the bus close.
        end = time.monotonic() + self.rng.uniform(*WALL_S)
        while time.monotonic() < end:
            self.pump()
            time.sleep(0.005)
        self.sim.power_cut_now()
        t0 = time.monotonic()
        while self.sim.restarts == restarts:  # events stay queued till the cut is known
            if time.monotonic() - t0 > WAIT_S:
                raise Failure("no restart after a wall-clock cut")
            time.sleep(0.005)
        self.cutter.cut_t = self.cut_time_in_log()
        self.out["wall_cuts"] += 1

    def _cut_at_a_virtual_instant(self, delay):
        self.cutter.plan(self.table.now + delay)
        t0 = time.monotonic()
        while not self.cutter.cut.wait(0.05):
            self.pump()
            if time.monotonic() - t0 > WAIT_S + delay / 1000.0:
                raise Failure("the cut planned at +%d ms never came" % delay)

    def _wait_for_the_boot(self, cut_t):
        """Every event the firmware sent before it died, then its boot:
        the first event that tells what the boot made of the cut."""
        boot = self.wait_event(lambda e: e["t"] >= cut_t + self.sim.power_off_ms and (
            e["ev"] == "fault" or (e["ev"] == "state" and e["state"] in ("idle", "resuming"))),
            "boot after the cut at %d" % cut_t)
        if boot["ev"] == "state" and boot["state"] == "resuming":
            boot = self.wait_event(lambda e: e["ev"] in ("fault", "hand_resumed") or (
                e["ev"] == "state" and e["state"] == "dealer"), "the resume after %d" % cut_t)
        return boot

    # -- the technician --------------------------------------------------------

    def _tip(self, lanes=None):
        self.cutter.tip_lanes(lanes)
        if not self.cutter.tipped.wait(WAIT_S):
            raise Failure("the technician never got to the table")

    def recover(self, start):
        """power_lost: a lift or a build the clear resumes (its lanes kept,
        those it names emptied alone); else tip the lanes, clear (-> idle);
        then start."""
        lost = self.last_lost if self.state == "fault" else None
        reason = lost.get("reason") if lost else None
        if reason in RESUMABLE:
            self._tip(lost.get("lane", []))
            n = self.out["cycles_resumed"]
            n[reason] = n.get(reason, 0) + 1
            self.out["lanes_emptied"] += len(lost.get("lane", []))
            self.check_next = True
            self.link.request("clear")
            if reason == "mid_build":
                self.wait_event(lambda e: e["ev"] == "state" and e["state"] == "building",
                                "building")
                return                     # the build goes on: nothing to start
            ev = self.wait_event(lambda e: e["ev"] == "fault" or (
                e["ev"] == "state" and e["state"] == "dealer"), "the lift finished")
            if ev["ev"] == "state":
                return                     # the walls up as audited: the dealer's key
            why = ev.get("detail", {}).get("reason", ev["name"])
            f = self.out["lift_fallbacks"]
            f[why] = f.get(why, 0) + 1
            self.check_next = False
        if self.state == "fault":
            self._tip()
            self.out["cycles_tipped"] += 1
            self.link.request("clear")
            self.wait_event(lambda e: e["ev"] == "state" and e["state"] == "idle", "idle")
        if start and self.state == "idle":     # else a resumed hand or its cycle goes on
            self.start()
            self.wait_event(lambda e: e["ev"] == "state" and e["state"] == "building",
                            "building")
