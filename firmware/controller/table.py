"""The table's cycle: one explicit state machine over the drivers.

    IDLE --start--> BUILDING --walls ready--> LIFTING --all up--> DEALER
    DEALER --dealer's key--> ROLLING --dice shown--> IN_HAND
    IN_HAND --hand_end (a win key, the link, a draw)--> LIFTING (next set
                                        already built) or BUILDING
    any --fault--> FAULT (every motor off) --clear--> where it stopped

While IN_HAND the HandFollower (follower.py) follows the walls in play.
The states are private constants (`_IDLE` ...): a public name would cost
the controller's heap an interned name each (docs/firmware.md, Memory);
NAMES gives them their link names.

With two tile sets the builder makes the next set during the hand (the
walls in play sit on the table top, the lifters go back down empty).
Every state change and fault is an event on the link (public facts only).

The controller by concern, a module each (firmware/controller/):

    the cycle          table.py: the state machine, its commands and its
                       tick; the flags and what awaits writing (`write`)
    the seat keys      keys.py: what a press or a gesture means in each
                       state (resident functions, called by the tick)
    faults             trip.py: raised at the tick, by main.run for a bug
                       (resident functions); cleared by work.py
    a technician's     work.py: started for a request (a jog, a scan), a
      work             `Work` the tick steps while it runs
    what survives      kept.py: the counters and the dealer read at boot,
      a power cut      the counters, the fault log and the hand's record
                       written between ticks (the tick only notes what
                       changed)
    a hand the power   wake.py: at boot, the walls read (`resuming`), the
      cut, back        hand rebuilt from them and its record, or
                       power_lost and the reason
    building a set     builder.py; following a hand: follower.py

What runs at every tick is resident (table, keys, trip, builder,
follower); work.py, kept.py and wake.py are loaded when they are
needed and forgotten after (a `Work` holds its module while it runs). Resident, a
module of functions costs the heap about 80 B and a class 112 B more
(docs/heap-idioms.md, 12c and 15): they fit in what the modules loaded
per use keep out of the resident heap (persist.py, the counters' code, a
jog's state).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.faults import OUTPUT_TIMEOUT as _OUTPUT_TIMEOUT, POWER_LOST as _POWER_LOST
from firmware.controller import builder, keys, trip
from firmware.controller.follower import HandFollower
from firmware.drivers import panel
from firmware.drivers import motion
from engine_core.dealer import Dealership

_BOOT = const(0)
_IDLE = const(1)
_BUILDING = const(2)
_LIFTING = const(3)
_DEALER = const(4)
_ROLLING = const(5)
_IN_HAND = const(6)
_FAULT = const(7)
_RESUMING = const(8)     # a hand the power cut, coming back (firmware/controller/wake.py)
NAMES = ("boot", "idle", "building", "lifting", "dealer", "rolling", "in_hand", "fault",
         "resuming")

_MARK = const("cycle")                # set while a cycle runs: found at boot = power was lost
_HAND = const("hand")                 # set from the walls coming up to the hand's end
_GAVE_UP = const("gave_up")           # the hand cut could not come back: no second try
                                      # (set by controller/wake.py with its fault's save)
# What awaits writing (`unwritten`, set in the tick, written by `write`);
# the hand's record is the follower's note, follower.rec[_NOTED] (1).
_NOTED = const(4)
_W_RECORD = const(1)
_W_COUNTERS = const(2)
_W_HAND_ON = const(4)                 # the flag `hand` set
_W_HAND_OFF = const(8)                # ... cleared
_W_MARK_OFF = const(16)               # the flag `cycle` cleared


_NO_TILE = const(0xFF)         # = tiles.NO_TILE: an empty slot of the walls


class TableController:
    """The table's state machine. Every attribute is set in __init__, at
    boot, for the reason LinkServer's are (firmware/link/server.py)."""

    def __init__(self, hal, cfg, devices, emit):
        """`devices`: the drivers (firmware/devices.py); `emit(name, fields)`
        sends an event to the host."""
        self.hal = hal
        self.cfg = cfg
        self.d = devices
        self.emit = emit
        self.builder = builder.Builder(devices.plate, devices.lanes, devices.rfid,
                                       cfg.tile_counts, cfg.timings["lane_idle_ms"],
                                       cfg.timings["build_max_ms"])
        self.state = _BOOT
        self.fault = 0
        self.fault_detail = None
        self.fault_at = 0
        self.resume_state = _IDLE  # where a cleared fault goes back to
        self.lost = None           # why the counters start from zero (a damaged file)
        self.unsaved = 0           # saves that failed (the flash)
        # A technician's jog or scan while it runs: controller/work.py's
        # object, made for the request that starts it, stepped by the tick,
        # dropped when it ends (None: none runs).
        self.work = None
        self.cycles = 0
        self.follower = HandFollower(cfg.rules, devices.rfid, self.builder,
                                     devices.display, devices.buzzer, emit,
                                     cfg.timings["draw_grace_ms"])
        self.in_play = bytearray(cfg.n_tiles)    # tile id per slot of the walls lifted
        self.gold_rolling = False  # the dealer's second roll: the gold by the dice
        self.hands = 0
        self.lifts = 0             # sets of walls lifted
        self.tiles_fed = [0, 0, 0, 0]     # by lane, walls audited
        self.fault_counts = bytearray(64)  # by code (saturating at 255)
        self.dealership = Dealership.first(hal.rand)
        self.next_ready = False    # a second set is built and audited in the lanes
        self.scanned = False       # rfid.seen/ids hold a whole scan, nothing moved since
        self.hand_cut = False      # the walls of a hand cut by the power still stand
        self.unwritten = 0         # what awaits writing (_W_*): `write`, between ticks

    # -- the cycle: commands (the link, the keys) and the tick ----------------

    def boot(self, now):
        for lifter in self.d.lifters:  # where they are, before anyone asks
            lifter.poll(now)
        # The counters and the fault log as last saved; a damaged file
        # starts them from zero and says so (`lost`): controller/kept.py.
        if not self._kept("restore"):
            # A new game: the first dealer drawn at __init__, kept at once,
            # before anyone is shown it (status tells it).
            self.unwritten |= _W_COUNTERS
        self.hand_cut = self.hal.flag(_HAND)
        if self.hand_cut and not self.hal.flag(_GAVE_UP):
            # The hand the power cut comes back: its record checked, the
            # walls read (`resuming`, ticks), the hand rebuilt; or
            # power_lost and the reason (firmware/controller/wake.py, loaded
            # for it and forgotten once the hand is back or given up).
            from firmware.controller import wake
            wake.begin(self, now, NAMES)
        elif self.hal.flag(_MARK):
            trip.fault(self, now, _POWER_LOST, {"reason": "restarted during a hand" if
                                                self.hand_cut else "restarted during a cycle"})
            self.resume_state = _IDLE
        else:
            self._enter(now, _IDLE)
        self.write()

    def start(self, now):
        """Begin a table cycle; a refusal text, or None when started."""
        if self.state != _IDLE:
            return "the table is %s, not idle" % NAMES[self.state]
        self.hal.set_flag(_MARK, True)
        self.hal.set_flag(_HAND, False)    # a hand cut by the power is over: a new cycle
        self.hal.set_flag(_GAVE_UP, False)
        self.hand_cut = False
        self.builder.state = builder.EMPTY
        self._lower_all(now)           # the builder starts once the platforms are down
        self._enter(now, _BUILDING)
        return None

    def hand_end(self, now, winner):
        """The hand's result: a winning seat, or None for a draw (和局)."""
        if self.state != _IN_HAND:
            return "no hand is being played (state %s)" % NAMES[self.state]
        if winner is not None and (type(winner) is not int or winner < 0 or winner > 3):
            return "the winner must be a seat 0..3, or null for a draw"
        self.follower.end()
        self.gold_rolling = False
        ds = self.dealership
        ds.hand_ended(winner)
        self.hands += 1
        # The new dealer and the hand counted, in one write; the hand's own
        # record is done with (the count says it ended).
        self.follower.rec[_NOTED] = 0
        self.unwritten = (self.unwritten & ~_W_HAND_ON) | _W_HAND_OFF | _W_COUNTERS
        self.emit("result", {"winner": winner, "dealer": ds.dealer, "wins_in_row": ds.wins_in_row,
                             "streak": ds.streak})
        self.d.display.show_alert(now, panel.ALERT_NONE)
        if self.hand_cut:
            # A hand brought back after a power cut (controller/wake.py):
            # its lanes may hold part of the next set, read before feeding.
            self.hand_cut = False
            if self.cfg.tile_sets == 2 and self._all(motion.BOTTOM):
                self.builder.resume(now)
        self._start_next(now)
        return None

    def in_hand(self):
        """From the walls coming up to the hand's end, whatever stopped the
        table in between: a fault (the state it resumes), or a power cut
        (the flag in the flash, read at boot: the hand resumed to its end,
        or, not resumed, until a start: the players finish it by hand,
        and the controller cannot see them end it; `resuming` too). What
        could read a tile or move the table is refused all that time
        (link/service.py)."""
        s = self.resume_state if self.state == _FAULT else self.state
        return _LIFTING <= s <= _IN_HAND or self.hand_cut

    def still(self):
        """Nothing moves for the cycle: idle, or stopped by a fault (what a
        technician's jog, scan or dice test needs)."""
        return self.state == _IDLE or self.state == _FAULT

    def step(self, now):
        d = self.d
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
        if self.work is not None:          # a technician's jog or scan (work.py)
            self.work.step(self, now)
        if self.hal.tripped >= 0:          # the HAL's guard turned an output off
            trip.fault(self, now, _OUTPUT_TIMEOUT, {"pin": self.hal.tripped})
            self.hal.tripped = -1
        self.follower.step(now, self.state == _IN_HAND)   # reads the walls in play
        if self.state == _FAULT:
            return
        if self.state == _RESUMING:        # before the faults: a reader's is a reason
            from firmware.controller import wake
            wake.step(self, now, NAMES)
            return
        for dev in d.fault_sources:
            if dev.fault:
                trip.fault(self, now, dev.fault, dev.detail)
                return
        state = self.state
        # Not in a hand the power cut (`hand_cut` then): nothing moves
        # unasked after a boot; its next set is built from its end.
        if state == _BUILDING or (state == _IN_HAND and self.cfg.tile_sets == 2
                                  and not self.hand_cut):
            self._build(now)
        if state == _LIFTING:
            if self._all(motion.TOP):
                self.d.display.show_dealer(now, self.dealership.dealer, self.dealership.streak)
                self.d.keys.clear()
                self._enter(now, _DEALER)
        elif state == _DEALER:
            if keys.dealer_rolls(self, now):
                d.dice.start(now)
                d.display.show_dice(now, 0, 0, True)
                self._enter(now, _ROLLING)
        elif state == _ROLLING:
            dice = d.dice
            if dice.done(now):
                d.display.show_dice(now, dice.a, dice.b, False)
                self.emit("dice", {"a": dice.a, "b": dice.b, "dealer": self.dealership.dealer})
                self.cycles += 1
                d.keys.clear()                 # the dice press is not a gesture
                self._enter(now, _IN_HAND)
                self.follower.begin(now, self.dealership.dealer, dice.a, dice.b,
                                    self.in_play)      # notes the hand's record
                self.unwritten |= _W_COUNTERS
                self._lower_all(now)           # platforms back down for the next set
                if self.cfg.tile_sets == 1:
                    self.unwritten |= _W_MARK_OFF
        elif state == _IN_HAND:
            keys.in_hand(self, now)
        elif state != _DEALER:
            for seat in range(4):              # nothing to press for now
                if d.keys.take_press(seat):
                    keys.refuse(self, now, seat, "no hand is on (the table is %s)" % NAMES[state])

    def _build(self, now):
        b = self.builder
        if b.state == builder.EMPTY:
            if self._all(motion.BOTTOM):
                b.start(now)
            return
        b.step(now)
        if b.fault:
            trip.fault(self, now, b.fault, b.detail)
        elif b.state == builder.READY and self.state == _BUILDING:
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
            self._enter(now, _BUILDING)
        else:
            self.builder.state = builder.EMPTY
            self._lower_all(now)
            self._enter(now, _BUILDING)

    def _lower_all(self, now):
        for lifter in self.d.lifters:
            lifter.lower(now)

    def _lift(self, now):
        self.in_play[:] = self.builder.wall      # the next audit writes over it
        self.lifts += 1
        self.unwritten = (self.unwritten & ~_W_HAND_OFF) | _W_HAND_ON | _W_COUNTERS
        per = len(self.in_play) // 4
        for slot in range(len(self.in_play)):
            if self.in_play[slot] != _NO_TILE:
                self.tiles_fed[slot // per] += 1
        self.builder.state = builder.EMPTY
        for lifter in self.d.lifters:
            lifter.lift(now)
        self._enter(now, _LIFTING)

    def _all(self, position):
        for lifter in self.d.lifters:
            if lifter.state != position:
                return False
        return True

    def _enter(self, now, state):
        self.state = state
        self.scanned = False           # the walls may change from here
        self.d.rfid.raw = None         # so a technician's scan is stale: its UIDs go
        self.emit("state", {"state": NAMES[state]})

    # -- what survives a power cut --------------------------------------------

    def write(self, more=0):
        """Write what the tick noted (`unwritten`, the follower's note of
        the hand's record, and `more`):
        the flags, the hand's record, the counters with the dealer. Called
        between ticks, never by the tick: by main.run after each step, by a
        request's handler after its change, and at boot. A flash write
        takes milliseconds (a block erased on the board); in the step it
        would delay that tick's outputs and reads, here it only shortens
        the sleep before the next tick (or overruns it, counted). Never
        raises: a failed write is counted in `unsaved`."""
        rec = self.follower.rec
        w = self.unwritten | rec[_NOTED] | more
        if not w:
            return
        self.unwritten = 0
        rec[_NOTED] = 0
        try:
            if w & (_W_HAND_ON | _W_HAND_OFF):
                self.hal.set_flag(_HAND, (w & _W_HAND_ON) != 0)
            if w & _W_MARK_OFF:
                self.hal.set_flag(_MARK, False)
            if w & _W_RECORD:
                self._kept("record")
        except Exception:
            self.unsaved += 1
        if w & _W_COUNTERS:
            self._save()

    def _save(self, fault=None):
        """Counters and the fault log (with `fault`, a new entry, at its
        end) to the flash (controller/kept.py). Never raises: a failed save
        is counted in `unsaved`, and the table goes on."""
        try:
            self._kept("save", fault)
        except Exception:
            self.unsaved += 1

    def faults_logged(self):
        """The fault log as saved, newest first: [t, code, name, detail]
        each; empty when there is no file yet or it is damaged."""
        return self._kept("logged")

    def _kept(self, what, arg=None):
        """kept.py's function `what` for this controller: the module and
        persist.py loaded for it and forgotten after, so that neither is
        resident (docs/heap-idioms.md, 15)."""
        from firmware.controller import kept
        from firmware.hal import forget
        try:
            return getattr(kept, what)(self, arg)
        finally:
            forget("firmware.controller.kept")
            forget("firmware.persist")
