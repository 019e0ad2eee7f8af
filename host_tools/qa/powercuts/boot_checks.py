"""The checks of each boot after a power cut: what the boot reports of
what it lost, nothing moving before a command, nothing persisted corrupt,
and the counters coherent with what the host saw before the cut."""

from host_tools.qa.powercuts.follower import Failure, LinkFollower
from host_tools.qa.powercuts.store_check import store_problems

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
QUIET_MS = 1000                 # virtual ms watched after a boot with no command sent
COUNTS = ("hands", "cycles", "lifts")


class BootChecker(LinkFollower):
    """After each cut, `check_boot` runs every check; the problems found
    are the cut's failure in the summary."""

    def __init__(self, sim, link, log=None):
        LinkFollower.__init__(self, sim, link, log)
        self.prev = None             # the last counters answer
        self.log_at = 0              # table.log entries already looked at
        self.wall = False            # the last cut came at a wall-clock instant
        with open(sim.config_path, "rb") as f:
            self.config_bytes = f.read()
        with open(sim.tags_path, "rb") as f:
            self.tags_bytes = f.read()

    def check_boot(self, n, cut_t, state_at_cut, boot, restarts):
        """Cut `n`, at virtual `cut_t` in `state_at_cut`: `boot` is the
        first event that tells what the boot made of it, `restarts` the
        firmware's restarts before the cut."""
        out = self.out
        out["cuts"] += 1
        out["by_state"][state_at_cut] = out["by_state"].get(state_at_cut, 0) + 1
        out["in_hand"] += state_at_cut == "in_hand"
        problems = []
        if self.sim.restarts != restarts + 1:
            problems.append("restarts %d, was %d" % (self.sim.restarts, restarts))
        got_lost = self._what_the_boot_reports(n, cut_t, state_at_cut, boot, problems)
        c, faults = self._quiet_until_a_command(cut_t, boot, problems)
        problems += self.check_store()
        # What it reports of what it lost.
        if "lost" in c or c["unsaved"]:
            problems.append("counters lost %r, unsaved %d" % (c.get("lost"), c["unsaved"]))
        self.pump()
        c = self._counts_as_seen(c, problems)
        self._dealer_as_told(problems)
        lost_count = dict((code, m) for code, m in c["faults"]).get(41, 0)
        if lost_count != min(self.seen["power_lost"], 255):
            problems.append("power_lost counted %d, seen %d" % (lost_count, self.seen["power_lost"]))
        if got_lost and (not faults["faults"] or faults["faults"][0]["name"] != "power_lost"):
            problems.append("fault log's newest is not power_lost: %s" % faults["faults"][:1])
        self._nothing_went_back(c, problems)
        self.prev = c
        if problems:
            out["failures"].append({"cut": n, "t": cut_t, "state": state_at_cut,
                                    "problems": problems})
            if self.log:
                self.log("cut %d at %d ms (%s): %s" % (n, cut_t, state_at_cut, "; ".join(problems)))

    def _what_the_boot_reports(self, n, cut_t, state_at_cut, boot, problems):
        """power_lost exactly when the table was not idle at the cut (or the
        hand resumed), with a named reason; the cuts counted by what became
        of them. Whether the boot reported power_lost."""
        out = self.out
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
        return got_lost

    def _quiet_until_a_command(self, cut_t, boot, problems):
        """Nothing moves before a command: watch a quiet second of virtual
        time after the boot. The `counters` and `faults` answers (the first
        commands), taken after it."""
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
        cur = self.players_at(boot_t) if self.parlour is not None else None
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
            self.out["moved_before_command"] += 1
            problems.append("outputs turned on before any command: %s" % moved[:4])
        return c, faults

    def _counts_as_seen(self, c, problems):
        """The counters equal what the host saw before the cut: the hand
        in play is lost, nothing the host was told of is. The last
        counters answer."""
        out = self.out
        for _ in range(3):
            if all(c[k] == self.seen[k] for k in COUNTS):
                break
            # The events taken off the link after the answer include those
            # the table sent after it (a resumed hand's `result`, the next
            # `dice` or lift): asked again, a count the table holds agrees;
            # a save lost at the cut stays one behind in every answer.
            c = self.link.request("counters")
            self.pump()
            out["asked_again"] += 1
        for k in COUNTS:
            if c[k] != self.seen[k]:
                if self.wall and abs(c[k] - self.seen[k]) == 1:
                    # Killed between a save and its event (or the event and
                    # its save): one in flight, the controller's count holds.
                    out["in_flight"] += 1
                    self.seen[k] = c[k]
                else:
                    problems.append("%s %d, the host saw %d" % (k, c[k], self.seen[k]))
        return c

    def _dealer_as_told(self, problems):
        if self.dealer is None:
            return
        # A resumed hand goes on after the boot and may end (a new
        # dealer) before `status` answers: its `result` comes before
        # the answer, taken off the link after it.
        told = self.dealer
        st = self.link.request("status")
        self.pump()
        if st["dealer"] not in (told, self.dealer) and not (self.wall and self.out["in_flight"]):
            problems.append("dealer %s, the host was told %s" % (st["dealer"], self.dealer))
        else:
            self.out["dealer_kept"] += 1

    def _nothing_went_back(self, c, problems):
        if self.prev is None:
            return
        for k in ("cycles", "hands", "lifts"):
            if c[k] < self.prev[k]:
                problems.append("%s went back: %d -> %d" % (k, self.prev[k], c[k]))
        if any(a < b for a, b in zip(c["tiles_fed"], self.prev["tiles_fed"])):
            problems.append("tiles_fed went back: %s -> %s" % (self.prev["tiles_fed"],
                                                              c["tiles_fed"]))

    def check_store(self):
        """Nothing persisted is corrupt (store_check.py); a `.new` file a
        torn save left is counted."""
        problems, new_file_left = store_problems(self.sim, self.config_bytes, self.tags_bytes)
        if new_file_left:
            self.out["new_file_left"] += 1
        return problems

    # -- the virtual table's log -----------------------------------------------

    def cut_time_in_log(self):
        """The virtual time of the last power cut, from the table's log."""
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
