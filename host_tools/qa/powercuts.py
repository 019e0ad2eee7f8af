"""`make powercuts`: the power cut at random instants of cycles and hands.

    python -m host_tools.qa.powercuts [--cuts N] [--seed S] [--json]

One virtual table, the real firmware under MicroPython, players for every
set of walls (`Parlour`). The power is cut (the virtual table's
`power_cut`: every output off, the firmware's process killed wherever it
is, the power back 500 ms later) at a random virtual instant: most cuts
come 0.2..400 s of virtual time after a `start` (CUT_AFTER_MS: they fall in
the build, the lift, the dealer's wait, the dice, the first hand with the
next set built during it, and later hands), a few while the table is idle and a few while it stands in the
`power_lost` fault of the cut before, before anyone cleared it. After each
reboot it checks:

* **nothing persisted is corrupt**: `counters.json` in the flash store
  loads (its CRC) and has the shape the firmware takes (persist.load and
  the checks TableController.boot makes); `config.json` still validates
  (firmware.config.load), `tags.txt` still parses (firmware.tags.load) and
  both are byte for byte what the table was given; `service.key` is the
  key; `counters` answers with no `lost` and no failed save (`unsaved`);
* **nothing moves before a command**: from the firmware's boot (its HELLO
  on the bus) until the first command, one virtual second at least, the
  virtual table's log shows no output turned on (motors, lifters; the
  buzzer only to answer a player's key press, a command too); the table's
  time runs on while the host asks, so what moves once the players end a
  resumed hand (`result`) or roll the dice again (`dice`) after the boot
  is theirs, not counted;
* **what was lost is reported coherently**: the boot reports `power_lost`
  exactly when the table was not idle at the cut (the cycle marker), and
  then the fault log's newest entry is that `power_lost`; the counters
  never go back, and equal what the host saw before the cut: hands = the
  `result` events, cycles = the `dice` events (not the gold's), lifts = the
  `lifting` states, power_lost in the fault counts = the `power_lost`
  events: the hand in play is lost, nothing the host was told of is. An
  event the table sent after its `counters` answer (a resumed hand going
  on) is taken off the link with those before it: the counters are asked
  again (a count lost at the cut stays behind in every answer).

After a `power_lost` `mid_lift` or `mid_build` (a lift or a build the
power cut, docs/reliability.md, A cut while building or lifting) the
technician empties only the lanes it names and clears: the cycle goes on
(`cycles_resumed`), and the first hand on the walls it makes is checked
against its replay from its first state (`replay_after_clear`). After any
other, the technician tips the lanes into the tray (docs/faults.md) and,
the hand being lost, the parlour puts the table in order: one whole set in
the tray, the other on the table top (VirtualTable.technician_sorts_the_sets;
tipping the lanes alone deadlocks the model after a cut in the middle of a
lift); the fault is cleared and the table started again. Every tile is
counted at each repair (`tiles`: none may be lost). Prints a summary (or JSON) with the
cuts by the firmware's state at the cut; exit 0 when every check passed.

Virtual-time cuts land between two of the firmware's ticks (its process is
killed while it waits for the table's NOW), so they never tear a write in
the middle. With `--wall-share P`, that share of the cuts in play comes at
a wall-clock instant instead (SimTable.power_cut_now kills the process
wherever it is: in a tick, in a save, writing an event), 0..3 s after the
start; a `.new` file left by a torn save is counted (`new_file_left`), and
a count saved but not yet told (or told but not yet saved) is in flight:
one off the host's at most, counted (`in_flight`), never more.
"""

import argparse
import json
import os
import random
import sys
import threading
import time

from host_tools.link.client import LinkClient, LinkError
from engine_core.replay import from_wire
from host_tools.cli.ops import resumed_mismatches
from host_tools.sim.hand_players import Parlour
from host_tools.sim.launcher import SimTable

# The states with the walls of a hand up (the flag `hand`, from the lift
# to the hand's end): a cut in them is a hand's; power_lost's reasons then
# (firmware/controller/resume.py), and that of a cut in a cycle.
HAND_STATES = ("lifting", "dealer", "rolling", "in_hand", "resuming")
# A lift or a build the power cut: the technician's clear resumes it
# (resume.py), the lanes are not tipped.
RESUMABLE = ("mid_lift", "mid_build")
REASONS = ("record", "record_full", "put_back", "reader", "unknown_tag", "mismatch",
           "unexplained", "not_whole", "restarted during a cycle", "restarted during a hand"
           ) + RESUMABLE
CYCLE_REASONS = ("restarted during a cycle", "mid_build")     # no hand's walls up
WAIT_S = 30.0                   # wall seconds for any one thing (a boot, an answer)
# Virtual ms from a start to the cut, drawn uniformly in one of these spans
# (with its weight): the build, the lift, the dealer and the dice; the
# first hand, with the next set built during it; later hands.
CUT_AFTER_MS = (((200, 40000), 0.40), ((40000, 150000), 0.45), ((150000, 400000), 0.15))
QUIET_MS = 1000                 # virtual ms watched after a boot with no command sent
SHARE_IDLE = 0.05               # cuts while idle (no cycle: no power_lost expected)
SHARE_FAULT = 0.05              # cuts in power_lost before `clear` (the marker stays)
SHARE_WALL = 0.0                # cuts in play at a wall-clock instant (--wall-share)
WALL_S = (0.0, 3.0)             # wall seconds after the start: ~0..150 s virtual
FAULT_LOG = 16
STALLED = 10                    # cuts in a row, each > 60 s after a start, with no lift:
                                # the table no longer builds (a failure, not a pass)


class Cutter:
    """Attached to the virtual table (its thread): cuts the power at the
    planned virtual time; the technician's tipping of the lanes too."""

    def __init__(self, table):
        self.table = table
        self.cut_at = None
        self.cut = threading.Event()
        self.cut_t = None
        self._tip = False
        self.tipped = threading.Event()
        self.tiles = []             # every tile the table holds, at each repair
        table.attach(self)

    def plan(self, t):
        self.cut.clear()
        self.cut_t = None
        self.cut_at = t

    def tip_lanes(self, lanes=None):
        """The parlour sorts the two sets (None), or the technician empties
        only `lanes` (power_lost `mid_build` names them; [] for none); the
        tiles are counted either way."""
        self.tipped.clear()
        self._tip = True if lanes is None else list(lanes)

    # the table's hooks
    def walls_up(self, now):
        pass

    def dice_shown(self, now, a, b):
        pass

    def next_time(self, now):
        if self._tip is not False:
            return now
        return self.cut_at

    def run(self, dt):
        pass

    def fire(self, now):
        if self._tip is not False:
            tip, self._tip = self._tip, False
            if tip is True:
                self.tiles.append(self.table.technician_sorts_the_sets())
            else:
                for side in tip:
                    self.table.technician_empties_lane(side)
                self.tiles.append(self.table.tiles_held())
            self.tipped.set()
        if self.cut_at is not None and now >= self.cut_at:
            self.cut_at = None
            self.cut_t = now
            self.table.power_cut()
            self.cut.set()


class Failure(Exception):
    pass


class Run:
    def __init__(self, sim, link, rng, log=None, share_idle=SHARE_IDLE, share_fault=SHARE_FAULT,
                 share_wall=SHARE_WALL):
        self.share_wall = share_wall
        self.share_idle = share_idle
        self.share_fault = share_fault
        self.sim = sim
        self.table = sim.table
        self.link = link
        self.rng = rng
        self.log = log
        self.cutter = Cutter(sim.table)
        self.state = "idle"          # the firmware's last state event
        self.state_at_cut = "idle"
        self.stalled = 0             # cuts in a row long after a start with no lift
        self.seen = {"hands": 0, "cycles": 0, "lifts": 0, "power_lost": 0}
        self.prev = None             # the last counters answer
        self.played = []             # the times of `result` and `dice` since the last cut
        self.log_at = 0              # table.log entries already looked at
        with open(sim.config_path, "rb") as f:
            self.config_bytes = f.read()
        with open(sim.tags_path, "rb") as f:
            self.tags_bytes = f.read()
        self.out = {"cuts": 0, "wall_cuts": 0, "in_flight": 0, "failures": [], "by_state": {},
                    "other_faults": {},
                    "power_lost": 0,
                    "no_power_lost": 0, "in_hand": 0, "moved_before_command": 0,
                    "new_file_left": 0,
                    # `counters` asked again: events the table sent after
                    # its answer were taken off the link before the compare.
                    "asked_again": 0,
                    # Cuts with the walls of a hand up (the flag `hand`): the
                    # hand resumed (in play, or the dealer's key again before
                    # the dice), or power_lost and its reason.
                    "hand_cuts": 0, "resumed": 0, "dice_again": 0, "fallbacks": {},
                    "replay_checked": 0, "replay_states": 0, "replay_mismatches": 0,
                    "dealer_kept": 0,
                    # Cycles the power cut while lifting or building: resumed
                    # on the technician's clear (by reason; `lanes_emptied`
                    # one by one, a wall with a gap), or the lanes tipped
                    # and the sets sorted (`cycles_tipped`); a lift resumed
                    # that then fell back (`lift_fallbacks`); the hands
                    # played after a resumed lift or build checked against
                    # their replay from their first state (`replay_after_clear`).
                    "cycles_resumed": {}, "lanes_emptied": 0, "cycles_tipped": 0,
                    "lift_fallbacks": {}, "replay_after_clear": 0}
        self.dealer = None           # the dealer the host was last told of
        self.following = None       # [players, states seen from a resume on, from its start]
        self.last_lost = None        # the detail of the last power_lost
        self.check_next = False      # the next hand's states against its replay (a resumed cycle)
        self.parlour = None         # the players (powercuts() seats them)

    # -- events ----------------------------------------------------------------

    def _see(self, ev):
        name = ev["ev"]
        if name == "state":
            self.state = ev["state"]
            # The state at the cut: the last one told before its instant
            # (events after it are the boot's).
            cut_t = self.cutter.cut_t
            if cut_t is None or ev["t"] < cut_t + self.sim.power_off_ms:
                self.state_at_cut = ev["state"]
            self.seen["lifts"] += ev["state"] == "lifting"
        elif name == "result":
            self.played.append(ev["t"])
            self.seen["hands"] += 1
            self.dealer = ev["dealer"]
            self._close_following()
        elif name == "dice" and not ev.get("gold"):
            self.played.append(ev["t"])
            self.seen["cycles"] += 1
            self.dealer = ev["dealer"]
            if self.check_next:
                # The first hand on walls a resumed lift or build made:
                # every state of it against its replay.
                self.check_next = False
                self.following = [self._players_at(ev["t"]), [], True]
        elif name == "hand_resumed":
            st = {"op": "resumed", "n": ev["n"]}
            st.update(from_wire(ev))
            self.following = [self._players_at(ev["t"]), [st], False]
        elif name == "hand" and self.following is not None:
            st = {"op": ev["op"], "n": ev["n"]}
            st.update(from_wire(ev))
            self.following[1].append(st)
        elif name == "fault" and ev["name"] == "power_lost":
            self.seen["power_lost"] += 1
            self.last_lost = ev.get("detail", {})
        elif name == "fault":              # not a cut's: counted, for the report
            self.last_lost = None
            other = self.out["other_faults"]
            other[ev["name"]] = other.get(ev["name"], 0) + 1

    def _players_at(self, t):
        """The players of the walls up at virtual time `t`: the event is
        taken off the link later than the table made it, and by then the
        hand may have ended and the next walls come up (the parlour's
        `current` is the table's now, not the event's)."""
        hands = self.parlour.hands
        for i in range(len(hands) - 1, -1, -1):
            up = hands[i].walls_up_at
            if up is not None and up <= t:
                return hands[i]
        return self.parlour.current

    def _close_following(self):
        """The states seen from the last resume on, against the replay of
        the players' scenario (the same hand: not abandoned since)."""
        f, self.following = self.following, None
        if f is None:
            return
        players, states, from_start = f
        if players is None or players.scenario is None or players.abandoned or not states:
            return
        bad = resumed_mismatches(states, players.scenario, from_start)
        self.out["replay_checked"] += 1
        self.out["replay_after_clear"] += from_start
        self.out["replay_states"] += len(states)
        if bad:
            self.out["replay_mismatches"] += 1
            self.out["failures"].append({"cut": self.out["cuts"], "problems": [
                "a resumed hand differs from its replay: %s" % bad[:2]]})
            if self.log:
                self.log("resumed hand differs from its replay: %s" % bad[:2])

    def pump(self):
        """Every event waiting, applied."""
        while True:
            ev = self.link.next_event(timeout=0)
            if ev is None:
                return
            self._see(ev)

    def wait_event(self, pred, what):
        t0 = time.monotonic()
        while time.monotonic() - t0 < WAIT_S:
            ev = self.link.next_event(timeout=0.5)
            if ev is None:
                continue
            self._see(ev)
            if pred(ev):
                return ev
        raise Failure("no %s within %.0f s (state %s)" % (what, WAIT_S, self.state))

    def wait_virtual(self, t):
        t0 = time.monotonic()
        while self.table.now < t:
            if time.monotonic() - t0 > WAIT_S:
                raise Failure("virtual time stuck at %d (waiting for %d)" % (self.table.now, t))
            self.pump()
            time.sleep(0.005)

    # -- one cut ---------------------------------------------------------------

    def start(self):
        self.link.request("start")

    def cut_once(self, n):
        table = self.table
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
        restarts = self.sim.restarts
        self.pump()
        lifts = self.seen["lifts"]
        if wall:
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
            self.cutter.cut_t = self._cut_time()
            self.out["wall_cuts"] += 1
        else:
            self.cutter.plan(table.now + delay)
            t0 = time.monotonic()
            while not self.cutter.cut.wait(0.05):
                self.pump()
                if time.monotonic() - t0 > WAIT_S + delay / 1000.0:
                    raise Failure("the cut planned at +%d ms never came" % delay)
        cut_t = self.cutter.cut_t
        self.wall = wall
        self._close_following()          # the states seen up to the cut
        self.played = []
        # Every event the firmware sent before it died, then its boot.
        boot = self.wait_event(lambda e: e["t"] >= cut_t + self.sim.power_off_ms and (
            e["ev"] == "fault" or (e["ev"] == "state" and e["state"] in ("idle", "resuming"))),
            "boot after the cut at %d" % cut_t)
        if boot["ev"] == "state" and boot["state"] == "resuming":
            boot = self.wait_event(lambda e: e["ev"] in ("fault", "hand_resumed") or (
                e["ev"] == "state" and e["state"] == "dealer"), "the resume after %d" % cut_t)
        state_at_cut = self.state_at_cut
        self._check_boot(n, cut_t, state_at_cut, boot, restarts)
        if delay > 60000 and not wall:
            self.stalled = self.stalled + 1 if self.seen["lifts"] == lifts else 0
            if self.stalled >= STALLED:
                raise Failure("the table no longer builds: %d cuts in a row more than 60 s "
                              "after a start with no lift (other faults %s)"
                              % (self.stalled, self.out["other_faults"]))

    def _check_boot(self, n, cut_t, state_at_cut, boot, restarts):
        out = self.out
        out["cuts"] += 1
        out["by_state"][state_at_cut] = out["by_state"].get(state_at_cut, 0) + 1
        out["in_hand"] += state_at_cut == "in_hand"
        problems = []
        if self.sim.restarts != restarts + 1:
            problems.append("restarts %d, was %d" % (self.sim.restarts, restarts))
        got_lost = boot["ev"] == "fault" and boot["name"] == "power_lost"
        resumed = boot["ev"] == "hand_resumed" or (boot["ev"] == "state"
                                                   and boot["state"] == "dealer")
        reason = boot.get("detail", {}).get("reason") if got_lost else None
        hand_cut = resumed or (got_lost and reason not in CYCLE_REASONS)
        if boot["ev"] == "fault" and not got_lost:
            problems.append("boot fault %s %s" % (boot["name"], boot.get("detail")))
        if (got_lost or resumed) != (state_at_cut != "idle"):
            problems.append("power_lost %s, resumed %s after a cut in state %s"
                            % (got_lost, resumed, state_at_cut))
        if state_at_cut in HAND_STATES and not hand_cut and not (
                state_at_cut == "resuming" and reason in CYCLE_REASONS):   # a build's lanes read
            problems.append("a cut in state %s not taken for a hand's (%s)" % (state_at_cut, reason))
        if got_lost and reason not in REASONS:
            problems.append("power_lost with an unnamed reason %r" % (reason,))
        out["power_lost" if got_lost else "no_power_lost"] += 1
        if hand_cut:
            out["hand_cuts"] += 1
            if boot["ev"] == "hand_resumed":
                out["resumed"] += 1
            elif resumed:
                out["dice_again"] += 1
            elif reason not in RESUMABLE:      # mid_lift: counted when cleared (recover)
                out["fallbacks"][reason] = out["fallbacks"].get(reason, 0) + 1
        if self.log and (hand_cut or got_lost):
            self.log("cut %d at %d ms (%s): %s" % (n, cut_t, state_at_cut, boot["ev"] if resumed
                                                   or not got_lost else "power_lost " + reason))
        # Nothing moves before a command: watch a quiet second of virtual time.
        boot_t = self._boot_time(cut_t)
        if boot_t is None:
            problems.append("no boot in the table's log after %d" % cut_t)
            boot_t = cut_t
        self.wait_virtual(max(boot_t, boot["t"]) + QUIET_MS)
        outputs = self._outputs_on(boot_t)
        # The answers come after every event the table sent before them:
        # the pump then has the `result` or `dice` before those outputs.
        c = self.link.request("counters")
        faults = self.link.request("faults", n=1)
        self.pump()
        # The buzzer answering a player's key (a refused press: "no hand is
        # on") or a tile they took in a resumed hand (the final group's
        # alert) is no motion and follows what they did: not counted.
        pressed = [t for t, _ in list(self.table.players.presses) if t >= boot_t]
        cur = self._players_at(boot_t) if self.parlour is not None else None
        pressed += [t for t, _, _ in list(cur.taken if cur is not None else []) if t >= boot_t]
        # The table's time runs on while the host asks: a resumed hand the
        # players end after the boot (its `result`) or the dealer's roll
        # again (`dice`) moves the table as it should, the players' doing:
        # what moved from then on is not counted.
        played = [t for t in self.played if t >= boot_t]
        moved = [o for o in outputs
                 if not (o[1] == "buzzer" and pressed and min(pressed) <= o[0])
                 and not (played and o[0] >= min(played))]
        if moved:
            out["moved_before_command"] += 1
            problems.append("outputs turned on before any command: %s" % moved[:4])
        problems += self._check_store()
        # What it reports of what it lost.
        if "lost" in c or c["unsaved"]:
            problems.append("counters lost %r, unsaved %d" % (c.get("lost"), c["unsaved"]))
        self.pump()
        for _ in range(3):
            if all(c[k] == self.seen[k] for k in ("hands", "cycles", "lifts")):
                break
            # The events taken off the link after the answer include those
            # the table sent after it (a resumed hand's `result`, the next
            # `dice` or lift): asked again, a count the table holds agrees;
            # a save lost at the cut stays one behind in every answer.
            c = self.link.request("counters")
            self.pump()
            out["asked_again"] += 1
        for k in ("hands", "cycles", "lifts"):
            if c[k] != self.seen[k]:
                if self.wall and abs(c[k] - self.seen[k]) == 1:
                    # Killed between a save and its event (or the event and
                    # its save): one in flight, the controller's count holds.
                    out["in_flight"] += 1
                    self.seen[k] = c[k]
                else:
                    problems.append("%s %d, the host saw %d" % (k, c[k], self.seen[k]))
        if self.dealer is not None:
            # A resumed hand goes on after the boot and may end (a new
            # dealer) before `status` answers: its `result` comes before
            # the answer, taken off the link after it.
            told = self.dealer
            st = self.link.request("status")
            self.pump()
            if st["dealer"] not in (told, self.dealer) and not (self.wall and self.out["in_flight"]):
                problems.append("dealer %s, the host was told %s" % (st["dealer"], self.dealer))
            else:
                out["dealer_kept"] += 1
        lost_count = dict((code, m) for code, m in c["faults"]).get(41, 0)
        if lost_count != min(self.seen["power_lost"], 255):
            problems.append("power_lost counted %d, seen %d" % (lost_count, self.seen["power_lost"]))
        if got_lost and (not faults["faults"] or faults["faults"][0]["name"] != "power_lost"):
            problems.append("fault log's newest is not power_lost: %s" % faults["faults"][:1])
        if self.prev is not None:
            for k in ("cycles", "hands", "lifts"):
                if c[k] < self.prev[k]:
                    problems.append("%s went back: %d -> %d" % (k, self.prev[k], c[k]))
            if any(a < b for a, b in zip(c["tiles_fed"], self.prev["tiles_fed"])):
                problems.append("tiles_fed went back: %s -> %s" % (self.prev["tiles_fed"],
                                                                  c["tiles_fed"]))
        self.prev = c
        if problems:
            out["failures"].append({"cut": n, "t": cut_t, "state": state_at_cut,
                                    "problems": problems})
            if self.log:
                self.log("cut %d at %d ms (%s): %s" % (n, cut_t, state_at_cut, "; ".join(problems)))

    def _cut_time(self):
        log = self.table.log
        for i in range(len(log) - 1, self.log_at - 1, -1):
            e = log[i]
            if e[1] == "table" and e[3] == "power_cut":
                return e[0]
        raise Failure("no power_cut in the table's log")

    def _boot_time(self, cut_t):
        log = self.table.log
        for i in range(self.log_at, len(log)):
            e = log[i]
            if e[0] >= cut_t and e[1] == "table" and e[3] == "boot":
                self.log_at = i
                return e[0]
        return None

    def _outputs_on(self, since):
        log = self.table.log
        end = len(log)
        on = [(e[0], e[3], e[4]) for e in log[self.log_at:end]
              if e[0] >= since and e[1] == "out" and e[4]]
        self.log_at = end
        return on

    def _check_store(self):
        from firmware import config as fwconfig
        from firmware import persist
        from firmware import tags as fwtags
        store = self.sim.store
        problems = []
        try:
            saved = persist.load(os.path.join(store, "counters.json"))
            if saved is None:
                problems.append("counters.json missing")
            else:
                fed, log = saved["tiles_fed"], saved["log"]
                ok = (all(type(saved[k]) is int and saved[k] >= 0
                          for k in ("cycles", "hands", "lifts"))
                      and len(fed) == 4 and all(type(x) is int for x in fed)
                      and len(log) <= FAULT_LOG
                      and all(len(e) == 4 for e in log)
                      and all(0 <= code < 64 and 0 < m <= 255 for code, m in saved["faults"]))
                if not ok:
                    problems.append("counters.json of another shape: %s" % saved)
        except (ValueError, KeyError, TypeError) as e:
            problems.append("counters.json: %s" % e)
        if os.path.exists(os.path.join(store, "counters.json.new")):
            self.out["new_file_left"] += 1
        for name, want in (("config.json", self.config_bytes), ("tags.txt", self.tags_bytes)):
            with open(os.path.join(store, name), "rb") as f:
                if f.read() != want:
                    problems.append("%s changed" % name)
        try:
            fwconfig.load(os.path.join(store, "config.json"))
        except ValueError as e:
            problems.append("config.json: %s" % e)
        try:
            fwtags.load(os.path.join(store, "tags.txt"))
        except ValueError as e:
            problems.append("tags.txt: %s" % e)
        with open(os.path.join(store, "service.key"), "rb") as f:
            if f.read() != self.sim.key:
                problems.append("service.key changed")
        return problems

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
            try:
                for n in range(cuts):
                    run.cut_once(n)
                    run.state_at_cut = run.state
                    run.cutter.cut_t = None
                    if log and (n + 1) % 50 == 0:
                        o = run.out
                        log("%d cuts, %d failures, %s; hand cuts %d: %d resumed, %d dice again, "
                            "fallbacks %s; cycles resumed %s, tipped %d; replay: %d hands, "
                            "%d states, %d differing"
                            % (n + 1, len(o["failures"]), o["by_state"], o["hand_cuts"],
                               o["resumed"], o["dice_again"], o["fallbacks"],
                               o["cycles_resumed"], o["cycles_tipped"],
                               o["replay_checked"], o["replay_states"], o["replay_mismatches"]))
            except (Failure, LinkError) as e:
                run.out["failures"].append({"cut": run.out["cuts"], "problems": [
                    "stopped: %s" % e]})
                run.out["stopped"] = str(e)
            try:
                run.pump()
            except LinkError:
                pass
            run._close_following()
            out = run.out
            out["seen"] = dict(run.seen)
            want = sim.table.config.tile_sets * sim.table.rules.n_tiles
            short = [i for i, n in enumerate(run.cutter.tiles) if n != want]
            out["tiles"] = {"want": want, "repairs": len(run.cutter.tiles),
                            "short": len(short), "min": min(run.cutter.tiles, default=want)}
            out["counters"] = {k: run.prev[k] for k in ("cycles", "hands", "lifts")} \
                if run.prev else None
        out["traceback"] = "Traceback" in sim.firmware_log()
        out["firmware_errors"] = len(sim.table.errors)
        out["virtual_s"] = round(sim.table.now / 1000.0, 1)
    out["seed"] = seed
    out["wall_s"] = round(time.monotonic() - t0, 1)
    out["ok"] = (out["cuts"] == cuts and not out["failures"] and not out["traceback"]
                 and not out["firmware_errors"] and not out["tiles"]["short"])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.qa.powercuts",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--cuts", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--wall-share", type=float, default=SHARE_WALL, metavar="P",
                    help="of the cuts in play, the share at a wall-clock instant (the "
                         "firmware killed wherever it is, a save included; default 0)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    log = None if args.json else (lambda s: print(s, flush=True))
    out = powercuts(args.cuts, args.seed, log, share_wall=args.wall_share)
    if args.json:
        print(json.dumps(out))
    else:
        print("powercuts: %(cuts)d cuts (%(wall_cuts)d at a wall-clock instant) by state "
              "%(by_state)s (%(in_hand)d in a hand); "
              "%(power_lost)d power_lost, %(no_power_lost)d boots without it; "
              "%(moved_before_command)d moved before a command; "
              "%(new_file_left)d .new left by a cut; %(in_flight)d counts in flight; "
              "counters asked again %(asked_again)d times; "
              "hand cuts %(hand_cuts)d: %(resumed)d resumed in play, %(dice_again)d to the "
              "dealer's key again, fallbacks %(fallbacks)s; cycles resumed on clear "
              "%(cycles_resumed)s (lanes emptied alone %(lanes_emptied)d; lifts that then fell "
              "back %(lift_fallbacks)s), cycles tipped %(cycles_tipped)d; "
              "%(replay_checked)d resumed hands "
              "checked against their replay (%(replay_after_clear)d after a resumed cycle; "
              "%(replay_states)d states, %(replay_mismatches)d "
              "differing); dealer kept %(dealer_kept)d; "
              "other faults %(other_faults)s; counters %(counters)s; "
              "%(virtual_s)s s virtual in %(wall_s)s s" % out)
        for f in out["failures"][:20]:
            print("failure: %s" % f)
        print("PASS" if out["ok"] else "FAIL (%d failures)" % len(out["failures"]))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
