"""One table's soak: hand after hand on a virtual table, the firmware
under MicroPython, faults injected and repaired, every hand checked
against its replay, the live link fuzzed after every result; at the end
the controller's counters against the virtual table's own counts, and
the verdict."""

import random
import time

from engine_core.replay import replay
from host_tools.cli.ops import public_state
from host_tools.link.client import LinkClient, LinkError
from host_tools.qa import linkfuzz
from host_tools.qa.soak.hand_check import first_difference, players_of, same_as_replay
from host_tools.qa.soak.injector import Injector
from host_tools.qa.soak.players import PACES
from host_tools.sim.hand_players import Parlour
from host_tools.sim.launcher import SimTable

STUCK_S = 30.0                 # wall seconds without an event: the table is stuck
HAND_S = 60.0                  # wall seconds without a hand's result: stuck too (a hand
                               # takes about 1 s; events may still come, e.g. refusals)


def soak(hands, seed=1, fault_rate=0.1, log=None, fuzz_frames=0, live_burst=50,
         pace="brisk", max_wall=None, heap=None, hooks=None):
    """Play `hands` hands on one table; the summary dict (its "ok": it passed).
    live_burst: fuzzed frames on the link after each hand's result;
    fuzz_frames: frames fed in process to the link server (linkfuzz);
    pace: the players' (PACES); max_wall: wall seconds after which the
    hand whose dice come next is the last (the end's checks still run;
    "complete" says whether every hand asked for was played).
    heap: the firmware's heap in bytes (SimTable; None: the port's own).
    hooks: instruments (host_tools/bench/fragmentation.py) with
      ready(sim, link): the firmware answered, before `start`;
      hand_over(sim, link): after each hand's result and its live fuzz;
      repaired(sim, link, ev, stopped): the technician has repaired the
        fault of the `fault` event `ev`, before `clear`: the table is
        stopped by it, when a service session is allowed; `stopped` is
        the state it stopped ("in_hand": a hand waits, its players do not)."""
    rng = random.Random(seed)
    out = {"hands": 0, "mismatches": 0, "faults": 0, "stuck": 0, "firmware_errors": 0,
           "results": {"win": 0, "draw": 0}, "seed": seed, "fault_rate": fault_rate,
           "pace": pace, "asked": hands}
    live = {"frames": 0, "bursts": 0, "answered": 0, "failures": []}
    t0 = time.monotonic()
    with SimTable(seed=seed, heap=heap) as sim:
        parlour = Parlour(sim.table, seed, players_class=PACES[pace])
        tech = Injector(sim.table, rng, fault_rate, parlour)
        with LinkClient(sim.link_path) as link:
            link.hello()
            link_before = link.request("status")["link"]
            if hooks is not None:
                hooks.ready(sim, link)
            link.request("start")
            follower = TableFollower(sim, link, parlour, tech, out, live, seed, log, hooks)
            follower.follow(hands, max_wall, t0, live_burst)
            counters = link.request("counters")
            link_after = link.request("status")["link"]
        _count_the_table(out, live, sim, tech, counters, link_before, link_after)
    out["wall_s"] = round(time.monotonic() - t0, 1)
    fuzz_ok = _link_fuzz_figures(out, live, fuzz_frames, seed, log)
    _verdict(out, hands, fuzz_ok)
    return out


class TableFollower:
    """Reads one table's events until the soak's end: each fault repaired
    by the technician and cleared, each hand's states checked against the
    replay of what its players did, the live link fuzzed after each
    result. The end: the last hand's dice, its result, and the next set
    up (see `_last_hand`). Figures go to the soak's summary (`out`, and
    `live` for the live link's fuzz)."""

    def __init__(self, sim, link, parlour, tech, out, live, seed, log, hooks):
        self.sim = sim
        self.link = link
        self.parlour = parlour
        self.tech = tech
        self.out = out
        self.live = live
        self.log = log
        self.hooks = hooks
        self.fuzz_rng = random.Random("soak-linkfuzz:%s" % seed)
        self.state = "idle"            # the last state but "fault": what a fault stops
        self.observed = []             # the hand's states, as the controller published them
        self.last = []                 # the last events, for a stuck table's report
        self.hand_at = time.monotonic()
        self.ending = False            # the last hand's dice are shown: no more dice
        self.played = False            # ... its result has come
        self.walls_up = False          # ... and the next set is up: the end

    def follow(self, hands, max_wall, t0, live_burst):
        """Until the end, or until the table is stuck. `t0`: the soak's
        start, from which `max_wall` counts."""
        while not self.walls_up:
            ev = self.link.next_event(timeout=STUCK_S)
            if ev is None or time.monotonic() - self.hand_at > HAND_S:
                self._stuck()
                break
            self.last = (self.last + [ev])[-12:]
            name = ev["ev"]
            if name == "state" and ev["state"] != "fault":
                self.state = ev["state"]
            if name == "fault":
                if not self._repair(ev):
                    break
            elif name == "dice" and not ev.get("gold") and (
                    self.out["hands"] == hands - 1
                    or (max_wall is not None and time.monotonic() - t0 >= max_wall)):
                self._last_hand()
            elif name == "state" and ev["state"] == "dealer":
                self.walls_up = self.played
            elif name == "hand":
                if ev["n"] == 0:
                    self.observed = []
                self.observed.append(public_state(ev))
            elif name == "result":
                self._hand_over(ev, live_burst)

    def _stuck(self):
        out = self.out
        out["stuck"] += 1
        try:                   # a stuck table may not answer at all
            out["stuck_status"] = self.link.request("status")
        except LinkError as e:
            out["stuck_status"] = "no answer (%s)" % e
        out["stuck_events"] = self.last

    def _repair(self, ev):
        """The technician repairs the fault reported, and it is cleared;
        False when the repair never came (the table is stuck)."""
        out = self.out
        out["faults"] += 1
        kinds = out.setdefault("fault_kinds", {})
        kinds[ev["name"]] = kinds.get(ev["name"], 0) + 1
        out["firmware_errors"] += ev["name"] == "firmware_error"
        if self.log:
            self.log("fault %s at %d ms: %s" % (ev["name"], ev["t"], ev["detail"]))
        self.tech.repair(ev["name"])
        if not self.tech.repaired.wait(STUCK_S):
            out["stuck"] += 1
            return False
        if self.hooks is not None:
            self.hooks.repaired(self.sim, self.link, ev, self.state)
        self.link.request("clear")
        return True

    def _last_hand(self):
        # The last hand's dice. Compare the counters where both count the
        # same tiles: the controller counts the tiles of the walls it
        # lifts when the lift begins, the table the tiles fed into the
        # lanes, and the next set is built from the dice on. So nobody
        # presses the dice key again: after this hand the table lifts the
        # set built during it and waits at the dealer's turn with empty
        # lanes.
        self.sim.table.players.auto_dice = False
        self.ending = True

    def _hand_over(self, ev, live_burst):
        """A hand's result: its states against the replay of its players'
        scenario, then the live link fuzzed."""
        out = self.out
        players = players_of(self.parlour, ev["t"])
        want = replay(players.scenario)
        same = same_as_replay(self.observed, want)
        out["mismatches"] += not same
        if not same and len(out.setdefault("mismatched", [])) < 3:
            out["mismatched"].append(first_difference(out["hands"], players, self.observed, want))
        out["results"]["draw" if ev["winner"] is None else "win"] += 1
        out["hands"] += 1
        self.played = self.ending
        self.hand_at = time.monotonic()
        if live_burst:
            self._fuzz_the_live_link(live_burst)
        if self.hooks is not None:
            self.hooks.hand_over(self.sim, self.link)
        if self.log and out["hands"] % 50 == 0:
            self.log("%d hands, %d faults" % (out["hands"], out["faults"]))

    def _fuzz_the_live_link(self, n):
        """n fuzzed frames on the live link, then a status: it must be answered."""
        live = self.live
        try:
            st = linkfuzz.live_burst(self.link, self.fuzz_rng, n)
            live["answered"] += st["ok"] is True
        except LinkError as e:
            live["failures"].append("after %d frames: %s" % (live["frames"] + n, e))
        live["frames"] += n
        live["bursts"] += 1


def _count_the_table(out, live, sim, tech, counters, link_before, link_after):
    """The end's figures: the controller's counters and the virtual
    table's own counts, the faults injected, the link's counts over the
    soak."""
    table = sim.table.counters()
    out["restarts"] = sim.restarts
    live["garbage"] = link_after["garbage"] - link_before["garbage"]
    live["bad_crc"] = link_after["bad_crc"] - link_before["bad_crc"]
    live["errors"] = link_after["errors"] - link_before["errors"]
    # Frames the controller dropped: the host's pty full, or no heap for
    # an event or an answer (a dropped hand event shows as a mismatch).
    out["dropped"] = link_after["dropped"] - link_before["dropped"]
    out["injected"] = len(tech.injected)
    out["injected_kinds"] = {}
    for _t, kind in tech.injected:
        kind = kind.split(":")[0]
        out["injected_kinds"][kind] = out["injected_kinds"].get(kind, 0) + 1
    out["landed"] = tech.landed
    out["traceback"] = "Traceback" in sim.firmware_log()
    out["counters"] = {k: counters[k] for k in ("cycles", "hands", "lifts", "tiles_fed")}
    # The tiles the technician tipped back were fed but will never be
    # lifted: the controller counts tiles fed by the walls it lifts.
    out["table_counts"] = {"tiles_fed": [fed - back for fed, back in
                                         zip(table["tiles_fed"], tech.tipped)],
                           "tipped": tech.tipped,
                           "lifts": table["lifter_cycles"][0],
                           "firmware_errors": table["firmware_errors"]}
    out["virtual_s"] = round(sim.table.now / 1000.0, 1)


def _link_fuzz_figures(out, live, fuzz_frames, seed, log):
    """The link's fuzz in the summary (`link_fuzz`): the live link's, and
    `fuzz_frames` fed in process now; whether both passed."""
    live["ok"] = (live["answered"] == live["bursts"] and not live["failures"]
                  and (not live["frames"] or live["garbage"] > 0))
    out["link_fuzz"] = {"live": live}
    if fuzz_frames:
        if log:
            log("link fuzz: %d frames in process" % fuzz_frames)
        f = linkfuzz.inprocess(fuzz_frames, seed)
        f["failures"] = f["failures"][:3]
        out["link_fuzz"]["inprocess"] = f
    out["link_fuzz"]["frames"] = live["frames"] + (
        fuzz_frames and out["link_fuzz"]["inprocess"]["frames"])
    return live["ok"] and (not fuzz_frames or out["link_fuzz"]["inprocess"]["ok"])


def _verdict(out, hands, fuzz_ok):
    out["counters_equal"] = (out["counters"]["tiles_fed"] == out["table_counts"]["tiles_fed"]
                             and out["counters"]["lifts"] == out["table_counts"]["lifts"]
                             and out["counters"]["hands"] == out["hands"])
    out["complete"] = out["hands"] == hands
    out["checks_ok"] = (out["hands"] > 0 and not out["mismatches"] and not out["stuck"]
                        and not out["firmware_errors"] and not out["traceback"]
                        and not out["table_counts"]["firmware_errors"] and out["counters_equal"]
                        and not out["restarts"] and fuzz_ok)
    out["ok"] = out["checks_ok"] and out["complete"]
