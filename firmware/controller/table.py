"""The table's cycle: one explicit state machine over the drivers.

    IDLE --start--> BUILDING --walls ready--> LIFTING --all up--> DEALER
    DEALER --dealer's key--> ROLLING --dice settled, written, shown--> IN_HAND
    IN_HAND --hand_end (a win key, the link, a draw)--> LIFTING (next set
                                        already built) or BUILDING
    any --fault--> FAULT (every motor off) --clear--> where it stopped

While IN_HAND the HandFollower (follower.py) follows the walls in play.
The states and their link names are controller/states.py's.

With two tile sets the builder makes the next set during the hand (the
walls in play sit on the table top, the lifters go back down empty).
Every state change and fault is an event on the link (public facts only).
"""

from firmware import faults
from firmware.sealed import Sealer
from firmware.faults import OUTPUT_TIMEOUT as _OUTPUT_TIMEOUT
from firmware.controller import builder, keys, safe_stop, saved_state
from firmware.controller.states import (BOOT, BUILDING, CYCLE_FLAG, DEALER, FAULT, GAVE_UP_FLAG,
                                        HAND_FLAG, IDLE, IN_HAND, LIFTING, NAMES, RESUMING,
                                        ROLLING)
from firmware.controller.follower import REC_NOTED, HandFollower
from firmware.controller.saved_state import (W_COUNTERS, W_ENDED, W_HAND_OFF, W_HAND_ON,
                                             W_MARK_OFF)
from firmware.drivers import panel
from firmware.drivers import motion
from engine_core.dealer import Dealership
from engine_core.dice import random_seat
from engine_core.tiles import NO_TILE

class TableController:
    """The table's state machine. Every attribute is set in __init__, at
    boot, for the reason LinkServer's are (firmware/link/server.py)."""

    def __init__(self, hal, cfg, devices, emit, key=None):
        """`devices`: the drivers (firmware/devices.py); `emit(name, fields)`
        sends an event to the host (LinkServer.emit); `key`: the table's
        key, which seals the files that name tiles (None: a table without
        one keeps no tile in its flash, and cannot bring a cut hand back)."""
        self.hal = hal
        self.cfg = cfg
        self.devices = devices
        self.link_emit = emit
        # Who else hears the controller's events (not the follower's hand
        # events): an object with `event(name, fields)`, the telemetry
        # (link/telemetry.py), or None.
        self.observer = None
        self.builder = builder.Builder(devices.plate, devices.lanes, devices.rfid,
                                       cfg.tile_counts, cfg.timings["lane_idle_ms"],
                                       cfg.timings["build_max_ms"])
        self.state = BOOT
        self.fault = 0
        self.fault_detail = None
        self.fault_at = 0
        self.resume_state = IDLE  # where a cleared fault goes back to
        self.lost = None           # why the counters start from zero (a damaged file)
        self.unsaved = 0           # saves that failed (the flash)
        self.hand_seal = Sealer(key, hal.rand, b"hand") if key else None
        self.walls_seal = Sealer(key, hal.rand, b"walls") if key else None
        # A technician's jog or scan while it runs: controller/service_work.py's
        # object, made for the request that starts it, stepped by the tick,
        # dropped when it ends (None: none runs).
        self.work = None
        # controller/resume.py's module once a boot found a hand, a build or
        # a lift the power cut (`boot`), else None.
        self.resume = None
        self.cycles = 0
        self.follower = HandFollower(cfg.rules, devices.rfid, self.builder,
                                     devices.display, devices.buzzer, emit,
                                     cfg.timings["draw_grace_ms"])
        self.in_play = bytearray(cfg.n_tiles)    # tile id per slot of the walls lifted
        self.gold_rolling = False  # the dealer's second roll: the gold by the dice
        # Dice settled and noted for the flash, shown on the next tick:
        # whatever a cut must not change is written before anyone sees it.
        self.dice_unshown = False
        self.hands = 0
        self.lifts = 0             # sets of walls lifted
        self.tiles_fed = [0, 0, 0, 0]     # by lane, walls audited
        self.fault_counts = bytearray(64)  # by code (saturating at 255)
        self.dealership = Dealership.first(hal.rand)
        self.next_ready = False    # a second set is built and audited in the lanes
        self.scanned = False       # rfid.seen/ids hold a whole scan, nothing moved since
        self.hand_cut = False      # the walls of a hand cut by the power still stand
        self.unwritten = 0         # what awaits writing (W_*): `write`, between ticks

    # -- the cycle: commands (the link, the keys) and the tick ----------------

    def boot(self, now):
        for lifter in self.devices.lifters:  # where they are, before anyone asks
            lifter.poll(now)
        # The counters and the fault log as last saved; a damaged file
        # starts them from zero and says so (`lost`): controller/saved_state.py.
        if not saved_state.restore(self):
            # A new game: the first dealer drawn at __init__, kept at once,
            # before anyone is shown it (status tells it).
            self.unwritten |= W_COUNTERS
        self.hand_cut = self.hal.flag(HAND_FLAG)
        if (self.hand_cut and not self.hal.flag(GAVE_UP_FLAG)) or self.hal.flag(CYCLE_FLAG):
            # The hand the power cut comes back: its record checked, the
            # walls read (`resuming`, ticks), the hand rebuilt; a lift or a
            # build the power cut, read, waits for the technician's clear;
            # or power_lost and the reason (firmware/controller/resume.py).
            # Imported only by a boot that has something to bring back: in
            # the .mpy form its code would take 8 KB of heap for good
            # (docs/heap-idioms.md). Held here, so the tick of `resuming`
            # imports nothing (an import allocates).
            from firmware.controller import resume
            self.resume = resume
            resume.begin(self, now)
        else:
            self._enter(now, IDLE)
        self.write()

    def start(self, now):
        """Begin a table cycle; a refusal text, or None when started."""
        if self.state != IDLE:
            return "the table is %s, not idle" % NAMES[self.state]
        self.hal.set_flag(CYCLE_FLAG, True)
        self.hal.set_flag(HAND_FLAG, False)    # a hand cut by the power is over: a new cycle
        self.hal.set_flag(GAVE_UP_FLAG, False)
        saved_state.erase_hand(self)       # a hand given up: its tiles go too
        self.hand_cut = False
        self.builder.state = builder.EMPTY
        self._lower_all(now)           # the builder starts once the platforms are down
        self._enter(now, BUILDING)
        return None

    def hand_end(self, now, winner):
        """The hand's result: a winning seat, or None for a draw (和局)."""
        if self.state != IN_HAND:
            return "no hand is being played (state %s)" % NAMES[self.state]
        if winner is not None and (type(winner) is not int or winner < 0 or winner > 3):
            return "the winner must be a seat 0..3, or null for a draw"
        self.follower.end()
        self.gold_rolling = False
        self.dice_unshown = False
        ds = self.dealership
        ds.hand_ended(winner)
        self.hands += 1
        # The new dealer and the hand counted, in one write; the hand's own
        # record is done with (the count says it ended), and erased with
        # the walls it was lifted on.
        self.follower.rec[REC_NOTED] = 0
        self.unwritten = (self.unwritten & ~W_HAND_ON) | W_HAND_OFF | W_ENDED | W_COUNTERS
        self.emit("result", {"winner": winner, "dealer": ds.dealer, "wins_in_row": ds.wins_in_row,
                             "streak": ds.streak})
        self.devices.display.show_alert(now, panel.ALERT_NONE)
        if self.hand_cut:
            # A hand brought back after a power cut (controller/resume.py):
            # its lanes may hold part of the next set, read before feeding.
            self.hand_cut = False
            if self.cfg.tile_sets == 2 and self._all(motion.BOTTOM):
                self.builder.resume(now)
        self._start_next(now)
        return None

    def emit(self, name, fields):
        """An event of the table's to the host, then to its observer."""
        self.link_emit(name, fields)
        if self.observer is not None:
            self.observer.event(name, fields)

    def kong(self, now, seat, concealed):
        """A kong declared by `seat` (the link's): a refusal text, or None."""
        if self.state != IN_HAND:
            return "no hand is being played (state %s)" % NAMES[self.state]
        return self.follower.kong(now, seat, concealed)

    def clear(self, now):
        """The fault cleared, the table back where it stopped
        (controller/safe_stop.py)."""
        return safe_stop.clear(self, now)

    def new_game(self):
        """A new game: the first dealer drawn again, the streak 0, saved
        with the counters before anyone is told. The new dealer."""
        ds = self.dealership
        ds.dealer = random_seat(self.hal.rand)
        ds.wins_in_row = 0
        self._save()
        return ds.dealer

    def status(self, now):
        """The table's part of `status` (link/server.py adds the link's)."""
        d = self.devices
        fault = None
        if self.fault:
            fault = {"code": self.fault, "name": faults.name_of(self.fault),
                     "detail": self.fault_detail or {}, "t": self.fault_at}
        return {"state": NAMES[self.state], "phase": builder.NAMES[self.builder.state],
                "cycles": self.cycles, "fault": fault, "uptime": now,
                "dealer": self.dealership.dealer,
                # Faces are public once they settle: a roll's are decided
                # as it starts, and shown only when it ends.
                "dice": [d.dice.a, d.dice.b] if d.dice.a and not d.dice.rolling else None,
                "tiles_per_side": self.builder.tiles_per_side(),
                "lanes": [lane.count for lane in d.lanes],
                "lifters": [motion.NAMES[l.state] for l in d.lifters]}

    def in_hand(self):
        """From the walls coming up to the hand's end, whatever stopped the
        table in between: a fault (the state it resumes), or a power cut
        (the flag in the flash, read at boot: the hand resumed to its end,
        or, not resumed, until a start: the players finish it by hand,
        and the controller cannot see them end it; `resuming` too). What
        could read a tile or move the table is refused all that time
        (link/service.py)."""
        s = self.resume_state if self.state == FAULT else self.state
        return LIFTING <= s <= IN_HAND or self.hand_cut

    def still(self):
        """Nothing moves for the cycle: idle, or stopped by a fault (what a
        technician's jog, scan or dice test needs)."""
        return self.state == IDLE or self.state == FAULT

    def step(self, now):
        """One control tick: the devices polled, then the state's step."""
        d = self.devices
        self._poll(now)
        self.follower.step(now, self.state == IN_HAND)   # reads the walls in play
        if self.state == FAULT:
            return
        if self.state == RESUMING:        # before the faults: a reader's is a reason
            self.resume.step(self, now)  # pyright: ignore[reportOptionalMemberAccess]  (set by the boot that entered resuming)
            return
        for dev in d.fault_sources:
            if dev.fault:
                safe_stop.fault(self, now, dev.fault, dev.detail)
                return
        state = self.state
        # Not in a hand the power cut (`hand_cut` then): nothing moves
        # unasked after a boot; its next set is built from its end.
        if state == BUILDING or (state == IN_HAND and self.cfg.tile_sets == 2
                                  and not self.hand_cut):
            self._build(now)
        if state == LIFTING:
            if self._all(motion.TOP):
                self.devices.display.show_dealer(now, self.dealership.dealer, self.dealership.streak)
                self.devices.keys.clear()
                self._enter(now, DEALER)
        elif state == DEALER:
            if keys.dealer_rolls(self, now):
                d.dice.start(now)
                d.display.show_dice(now, 0, 0, True)
                self._enter(now, ROLLING)
        elif state == ROLLING:
            if self.dice_unshown:
                self._show_dice(now)
            elif d.dice.done(now):
                self._dice_settled(now)
        elif state == IN_HAND:
            keys.in_hand(self, now)
        elif state != DEALER:
            for seat in range(4):              # nothing to press for now
                if d.keys.take_press(seat):
                    keys.refuse(self, now, seat, "no hand is on (the table is %s)" % NAMES[state])

    def _poll(self, now):
        """Every device polled; a motion past its learned time told; a
        technician's jog or scan stepped; an output the HAL's guard turned
        off raised as a fault."""
        d = self.devices
        d.plate.poll(now)
        for lane in d.lanes:
            lane.poll(now)
        for lifter in d.lifters:
            lifter.poll(now)
        d.rfid.poll(now)
        d.display.poll(now)
        d.keys.poll(now)
        d.buzzer.poll(now)
        slow = motion.slow()                  # a motion past its learned time
        if slow:
            self.emit("slow", slow)
        if self.work is not None:          # a technician's jog or scan (service_work.py)
            self.work.step(self, now)
        if self.hal.tripped >= 0:          # the HAL's guard turned an output off
            safe_stop.fault(self, now, _OUTPUT_TIMEOUT, {"pin": self.hal.tripped})
            self.hal.tripped = -1

    def _dice_settled(self, now):
        """The dice settled: the hand begins in its record (the dice, so
        the break, and the dealer), written between this tick and the
        next (`write`); nothing shows them yet. A cut before the write
        rolls again, and no one saw this roll; a cut after it resumes the
        hand with these dice (controller/resume.py)."""
        d = self.devices
        self.follower.begin(now, self.dealership.dealer, d.dice.a, d.dice.b,
                            self.in_play)      # notes the hand's record
        self.cycles += 1
        self.unwritten |= W_COUNTERS
        self.dice_unshown = True

    def _show_dice(self, now):
        """The dice written: shown and told; the hand is on."""
        d = self.devices
        dice = d.dice
        self.dice_unshown = False
        d.display.show_dice(now, dice.a, dice.b, False)
        self.emit("dice", {"a": dice.a, "b": dice.b, "dealer": self.dealership.dealer})
        d.keys.clear()                 # the dice press is not a gesture
        self._enter(now, IN_HAND)
        self.follower.show_again(now)  # the counts, the gold's place blank
        self._lower_all(now)           # platforms back down for the next set
        if self.cfg.tile_sets == 1:
            self.unwritten |= W_MARK_OFF

    def _build(self, now):
        b = self.builder
        if b.state == builder.EMPTY:
            if self._all(motion.BOTTOM):
                b.start(now)
            return
        b.step(now)
        if b.fault:
            safe_stop.fault(self, now, b.fault, b.detail)
        elif b.state == builder.READY and self.state == BUILDING:
            self.emit("walls", {"tiles_per_side": b.tiles_per_side()})
            self._lift(now)
        elif b.state == builder.READY and not self.next_ready:
            self.next_ready = True
            self.emit("walls", {"tiles_per_side": b.tiles_per_side(), "next": True})

    def _start_next(self, now):
        if self.next_ready:
            self.next_ready = False
            self._lift(now)
        elif self.builder.state != builder.EMPTY:
            # Two sets, the next one half built when the hand ended: go on
            # building it (the lanes hold its tiles; counting again from
            # zero would overfill them and end in a false lane_jam).
            self._enter(now, BUILDING)
        else:
            self.builder.state = builder.EMPTY
            self._lower_all(now)
            self._enter(now, BUILDING)

    def _lower_all(self, now):
        for lifter in self.devices.lifters:
            lifter.lower(now)

    def _lift(self, now):
        self.in_play[:] = self.builder.wall      # the next audit writes over it
        self.lifts += 1
        self.unwritten = (self.unwritten & ~W_HAND_OFF) | W_HAND_ON | W_COUNTERS
        per = len(self.in_play) // 4
        for slot in range(len(self.in_play)):
            if self.in_play[slot] != NO_TILE:
                self.tiles_fed[slot // per] += 1
        self.builder.state = builder.EMPTY
        for lifter in self.devices.lifters:
            lifter.lift(now)
        self._enter(now, LIFTING)

    def _all(self, position):
        for lifter in self.devices.lifters:
            if lifter.state != position:
                return False
        return True

    def _enter(self, now, state):
        self.state = state
        self.scanned = False           # the walls may change from here
        self.devices.rfid.raw = None         # so a technician's scan is stale: its UIDs go
        self.emit("state", {"state": NAMES[state]})

    # -- what survives a power cut --------------------------------------------

    def write(self, more=0):
        """Write what the tick noted (`unwritten`), between ticks, never in
        the tick (controller/saved_state.py's `write` says why). Called by
        main.run after each step, by a request's handler after its change,
        and at boot. Never raises: a failed write is counted in `unsaved`."""
        saved_state.write(self, more)

    def _save(self, fault=None):
        """Counters and the fault log (with `fault`, a new entry, at its
        end) to the flash (controller/saved_state.py). Never raises: a failed save
        is counted in `unsaved`, and the table goes on."""
        try:
            saved_state.save(self, fault)
        except Exception:
            self.unsaved += 1

    def faults_logged(self):
        """The fault log as saved, newest first: [t, code, name, detail]
        each; empty when there is no file yet or it is damaged."""
        return saved_state.logged(self)
