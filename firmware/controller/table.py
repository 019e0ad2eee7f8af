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

The controller by concern (TableController's sections below, and the
modules beside it):

    the cycle          the state machine, its commands and its tick (here)
    the seat keys      what a press or a gesture means in each state (here)
    a technician's     started for a request by work.py (a jog, a scan),
      work             run to its end by the tick (here)
    faults             raised at the tick (here), cleared by work.py
    what survives      the counters and the dealer read at boot, the
      a power cut      hand's record checked at boot (handrec.py, loaded
                       for it); written between ticks (`write`): the
                       tick only notes what changed (here, through
                       persist.py)
    building a set     builder.py; following a hand: follower.py

What runs at the tick is resident; what only a request starts (work.py)
is loaded for the request and forgotten after it (docs/heap-idioms.md,
12: a concern in a class or module of its own, resident, costs the heap
more than the targets leave).
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware import faults, persist
from firmware.faults import (FIRMWARE_ERROR as _FIRMWARE_ERROR, OUTPUT_TIMEOUT as _OUTPUT_TIMEOUT,
                             POWER_LOST as _POWER_LOST)
from firmware.controller import builder
from firmware.controller.follower import HandFollower
from firmware.drivers import panel
from firmware.drivers import motion
from firmware.drivers import rfid
from firmware.hal import ticks_add, ticks_diff
from engine_core.dealer import Dealership
from engine_core.hand import DRAW
from engine_core.tiles import is_int

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
_COUNTERS = const("counters.json")    # counters, fault log, dealer: kept across power cuts (persist.py)
_RECORD = const("hand.json")          # the hand in play's record (follower.record, handrec.py)
# What awaits writing (`unwritten`, set in the tick, written by `write`);
# the hand's record is the follower's note, follower.rec[_NOTED] (1).
_NOTED = const(4)
_W_RECORD = const(1)
_W_COUNTERS = const(2)
_W_HAND_ON = const(4)                 # the flag `hand` set
_W_HAND_OFF = const(8)                # ... cleared
_W_MARK_OFF = const(16)               # the flag `cycle` cleared


_FAULT_LOG = const(16)         # faults kept for `mjctl faults`
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
        # A technician's work (controller/work.py starts it for a request,
        # the tick ends it): a jog's driver, deadline and [name, n,
        # started, count before] (filled in place: a list made per jog would
        # stay in the heap until the next one); an RFID scan of the walls in
        # the lanes, side by side (-1: none).
        self.jogging = None
        self.jog_until = 0
        self.jog = ["", 0, 0, 0]
        self.scan_side = -1
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
        # starts them from zero and says so (`lost`).
        try:
            saved = persist.load(self.hal.store + _COUNTERS)
            if saved:
                cycles, hands, lifts = saved["cycles"], saved["hands"], saved["lifts"]
                fed, log = list(saved["tiles_fed"]), saved["log"]
                counts = bytearray(len(self.fault_counts))
                for code, n in saved["faults"]:
                    counts[code] = n
                learned = motion.learned[:]   # none in an older file: learning starts
                got = saved.get("learned", list(learned))
                for i in range(len(got)):
                    learned[i] = got[i]
                if len(fed) != 4 or len(log) > _FAULT_LOG or list(learned) != got:
                    raise ValueError("not this firmware's counters")
                for t, code, _name, detail in log:       # what the ring can hold
                    if not (is_int(t, 0, 0x3FFFFFFF) and is_int(code, 0, 255)
                            and type(detail) is dict):
                        raise ValueError("a damaged fault log entry")
                dealer = saved.get("dealer")     # [seat, wins in a row]
                if dealer is not None and not (type(dealer) is list and len(dealer) == 2
                                               and is_int(dealer[0], 0, 3)
                                               and is_int(dealer[1], 0, 1 << 30)):
                    raise ValueError("a damaged dealer")
                self.cycles, self.hands, self.lifts = cycles, hands, lifts
                self.tiles_fed = fed
                self.fault_counts[:] = counts
                motion.learned[:] = learned
                if dealer is not None:           # the game goes on (docs/hand.md)
                    self.dealership.dealer, self.dealership.wins_in_row = dealer
        except (ValueError, KeyError, TypeError, IndexError, OverflowError) as e:
            # Damaged, or whole but of another shape (another firmware's):
            # nothing of it is taken, and `counters` says so.
            self.lost = "%s: counting again from zero, a new game" % e
            saved = None
        if not saved or saved.get("dealer") is None:
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
            self._fault(now, _POWER_LOST, {"reason": "restarted during a hand" if
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
        and the controller cannot see them end it). What could read a tile or move the table is refused all that
        time (link/service.py)."""
        s = self.resume_state if self.state == _FAULT else self.state
        return _LIFTING <= s <= _IN_HAND or self.hand_cut

    def still(self):
        """Nothing moves for the cycle: idle, or stopped by a fault (what a
        technician's jog, scan or dice test needs)."""
        return self.state == _IDLE or self.state == _FAULT

    def kong(self, now, seat, concealed):
        """A kong declared on the link; None, or why it is refused."""
        if self.state != _IN_HAND:
            return "no hand is being played (state %s)" % NAMES[self.state]
        return self.follower.kong(now, seat, concealed)

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
        if self.jogging is not None or self.scan_side >= 0:
            self._service_work(now)
        if self.hal.tripped >= 0:          # the HAL's guard turned an output off
            self._fault(now, _OUTPUT_TIMEOUT, {"pin": self.hal.tripped})
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
                self._fault(now, dev.fault, dev.detail)
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
            self._wait_dice_key(now)
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
            self._follow(now)
        elif state != _DEALER:
            for seat in range(4):              # nothing to press for now
                if d.keys.take_press(seat):
                    self._refuse(now, seat, "no hand is on (the table is %s)" % NAMES[state])

    def _build(self, now):
        b = self.builder
        if b.state == builder.EMPTY:
            if self._all(motion.BOTTOM):
                b.start(now)
            return
        b.step(now)
        if b.fault:
            self._fault(now, b.fault, b.detail)
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

    # -- the seat keys: what a press or a gesture means now -------------------

    def _wait_dice_key(self, now):
        d = self.d
        dealer = self.dealership.dealer
        for seat in range(4):
            if d.keys.take_press(seat):
                if seat == dealer:
                    d.dice.start(now)
                    d.display.show_dice(now, 0, 0, True)
                    self._enter(now, _ROLLING)
                    return
                self._refuse(now, seat, "only the dealer rolls")

    def _follow(self, now):
        d = self.d
        f = self.follower
        dealer = self.dealership.dealer
        if self.gold_rolling and d.dice.done(now):
            self.gold_rolling = False
            d.display.show_dice(now, d.dice.a, d.dice.b, False)
            self.emit("dice", {"a": d.dice.a, "b": d.dice.b, "dealer": dealer, "gold": True})
            f.gold_dice(now, d.dice.a + d.dice.b)
        for seat in range(4):
            pressed = d.keys.take_press(seat)
            g = d.keys.take_gesture(seat)      # presses are read as gestures here
            if self.gold_rolling:
                if g and seat != dealer:       # the dealer's own press makes one too
                    self._refuse(now, seat, "the dice are rolling for the gold")
                continue
            if f.wants_gold_dice():
                if pressed and seat == dealer:
                    self.gold_rolling = True   # the gold by the dice (§7)
                    d.dice.start(now)
                    d.display.show_dice(now, 0, 0, True)
                elif g:
                    self._refuse(now, seat, "the dealer rolls for the gold")
                continue
            if g == panel.HOLD:
                self.hand_end(now, seat)       # "I win"
                return
            if g == panel.SINGLE or g == panel.DOUBLE:
                why = f.kong(now, seat, g == panel.DOUBLE)
                if why:
                    self._refuse(now, seat, why)
        if f.active and f.phase == DRAW:       # nothing left to draw: 和局
            self.hand_end(now, None)

    def _refuse(self, now, seat, reason):
        """A key pressed when it means nothing: a beep and an event, no change."""
        self.d.buzzer.beep(now, 150)
        self.emit("refused", {"seat": seat, "reason": reason})

    # -- a technician's work, run to its end (started by work.py) -------------

    def _service_work(self, now):
        """A technician's jog ends at its deadline, or at its switch for a
        lifter, and says what it did; a scan reads the four sides in turn."""
        j = self.jogging
        if j is not None:
            at_switch = j in self.d.lifters and (j.state == motion.TOP or j.state == motion.BOTTOM)
            if at_switch or ticks_diff(now, self.jog_until) >= 0:
                self.jogging = None
                if j in self.d.lifters:
                    j.halt()
                else:
                    j.stop()
                name, n, at, base = self.jog
                count = j.revolutions if j is self.d.plate else j.count if j in self.d.lanes else 0
                self.emit("jogged", {"name": name, "lane": n, "ms": ticks_diff(now, at),
                                     "end": "switch" if at_switch else "time",
                                     "count": count - base})
        r = self.d.rfid
        side = self.scan_side
        if side < 0:
            return
        if r.fault or (r.state == rfid.DONE and r.level == 0):
            if r.state == rfid.DONE:
                r.release()
                side += 1
            if side < 4 and not r.fault:
                r.scan(now, side, 0)
            else:
                self.scanned = side == 4
                tags = 0
                for seen in r.seen:
                    tags += seen
                self.emit("scanned", {"sides": side, "tags": tags})
                side = -1
            self.scan_side = side
        elif r.state == rfid.IDLE:
            r.scan(now, side, 0)

    # -- faults: raised here, cleared by work.py ------------------------------

    def crashed(self, now, exc):
        """A bug raised in the loop: the safe state, and the bug on the link."""
        self.hal.all_off()
        self._fault(now, _FIRMWARE_ERROR, {"reason": "%s: %s" % (type(exc).__name__, exc)})

    def _fault(self, now, code, detail):
        self.hal.all_off()
        self.jogging = None
        self.scan_side = -1
        self.builder.stop()
        for lifter in self.d.lifters:
            lifter.stop()
        if self.state != _FAULT:
            self.resume_state = self.state if self.state != _BOOT else _IDLE
        self.fault = code
        self.fault_detail = detail
        self.fault_at = now
        if code < len(self.fault_counts) and self.fault_counts[code] < 255:
            self.fault_counts[code] += 1
        self._save([now, code, faults.name_of(code), detail or {}])
        name = faults.name_of(code)
        self._enter(now, _FAULT)
        self.emit("fault", {"code": code, "name": name, "detail": detail or {}})

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
                # Made by handsave.py, loaded for it and forgotten: the
                # record's maker is no part of the resident heap.
                from firmware import handsave
                from firmware.hal import forget
                try:
                    persist.save(self.hal.store + _RECORD,
                                 handsave.record(self.follower, self.hands + 1,
                                                 self.dealership.wins_in_row))
                finally:
                    forget("firmware.handsave")
        except Exception:
            self.unsaved += 1
        if w & _W_COUNTERS:
            self._save()

    def _save(self, fault=None):
        """Counters and the fault log (with `fault`, a new entry, at its
        end) to the flash (persist.py). Never raises: a failed save (a full
        or failing flash, no heap for it now) is counted in `unsaved`, and
        the table goes on. The fault log lives in the file alone: a log in
        the heap kept each fault's blocks wherever the heap had room when it
        came, until 16 faults later, and over a day of faults they split the
        free heap (docs/heap-idioms.md)."""
        try:
            log = self.faults_logged()
            log.reverse()                  # oldest first, as saved
            if fault is not None:
                log.append(fault)
                del log[:-_FAULT_LOG]
            counts = []
            for code in range(len(self.fault_counts)):
                if self.fault_counts[code]:
                    counts.append([code, self.fault_counts[code]])
            persist.save(self.hal.store + _COUNTERS, {
                "cycles": self.cycles, "hands": self.hands, "lifts": self.lifts,
                "tiles_fed": self.tiles_fed, "faults": counts,
                "log": log,
                "learned": list(motion.learned),     # the motions' learned times (motion.py)
                "dealer": [self.dealership.dealer, self.dealership.wins_in_row]})
        except Exception:
            self.unsaved += 1

    def faults_logged(self):
        """The fault log as saved, newest first: [t, code, name, detail]
        each; empty when there is no file yet or it is damaged."""
        try:
            saved = persist.load(self.hal.store + _COUNTERS)
        except ValueError:
            return []
        log = saved["log"] if type(saved) is dict and type(saved.get("log")) is list else []
        log.reverse()
        return log
