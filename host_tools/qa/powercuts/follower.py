"""What the host saw of the table over the link, between the power cuts:
the firmware's state (and its state at the cut), the counts the host was
told of, the dealer, the last power_lost, and the states of a resumed
hand, checked against its replay when it ends or the power is cut."""

import time

from engine_core.replay import from_wire
from host_tools.cli.ops import resumed_mismatches
from host_tools.qa.powercuts.cutter import Cutter
from host_tools.qa.powercuts.summary import new_summary

WAIT_S = 30.0                   # wall seconds for any one thing (a boot, an answer)


class Failure(Exception):
    """The run cannot go on: something waited for never came."""


class LinkFollower:
    """The table's events, taken off the link and applied (`see_event`),
    into the figures the checks compare and the summary (`out`)."""

    def __init__(self, sim, link, log=None):
        self.sim = sim
        self.table = sim.table
        self.link = link
        self.log = log
        self.cutter = Cutter(sim.table)
        self.state = "idle"          # the firmware's last state event
        self.state_at_cut = "idle"
        self.seen = {"hands": 0, "cycles": 0, "lifts": 0, "power_lost": 0}
        self.rolled = False          # the walls up have had their `dice` (a cycle counted)
        self.played = []             # the times of `result` and `dice` since the last cut
        self.out = new_summary()
        self.dealer = None           # the dealer the host was last told of
        self.following = None       # [players, states seen from a resume on, from its start]
        self.last_lost = None        # the detail of the last power_lost
        self.check_next = False      # the next hand's states against its replay (a resumed cycle)
        self.parlour = None         # the players (powercuts() seats them)

    def see_event(self, ev):
        """One event taken off the link, applied to what the host saw."""
        name = ev["ev"]
        if name == "state":
            self.state = ev["state"]
            # The state at the cut: the last one told before its instant
            # (events after it are the boot's).
            cut_t = self.cutter.cut_t
            if cut_t is None or ev["t"] < cut_t + self.sim.power_off_ms:
                self.state_at_cut = ev["state"]
            self.seen["lifts"] += ev["state"] == "lifting"
            if ev["state"] == "lifting":
                self.rolled = False
        elif name == "result":
            self.played.append(ev["t"])
            self.seen["hands"] += 1
            self.dealer = ev["dealer"]
            self.check_resumed_hand()
        elif name == "dice" and not ev.get("gold"):
            self.played.append(ev["t"])
            self.seen["cycles"] += 1
            self.rolled = True
            self.dealer = ev["dealer"]
            if self.check_next:
                # The first hand on walls a resumed lift or build made:
                # every state of it against its replay.
                self.check_next = False
                self.following = [self.players_at(ev["t"]), [], True]
        elif name == "hand_resumed":
            if not self.rolled:
                # Cut between the dice written and their `dice` event: the
                # cycle counted with them, told now (docs/reliability.md,
                # Written before shown).
                self.rolled = True
                self.seen["cycles"] += 1
            st = {"op": "resumed", "n": ev["n"]}
            st.update(from_wire(ev))
            self.following = [self.players_at(ev["t"]), [st], False]
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

    def players_at(self, t):
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

    def check_resumed_hand(self):
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
            self.see_event(ev)

    def wait_event(self, pred, what):
        t0 = time.monotonic()
        while time.monotonic() - t0 < WAIT_S:
            ev = self.link.next_event(timeout=0.5)
            if ev is None:
                continue
            self.see_event(ev)
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
