"""The virtual table: the devices of docs/hardware.md composed on one clock.

Time is integer virtual ms. Between events every device moves at a
constant rate (plate phase, lifter position, a lane's gap or stacking
clock), so `advance_to` jumps from one event to the next: it asks every
device when its next event is, runs them all to the earliest one and fires
what is due there. A 30 s cycle is a few hundred events.

Tiles flow tray -> plate -> lane chute -> wall on the lifter platform ->
table top (in play) -> pile (players' hands, the old walls) -> tray. With
`tile_sets` = 2 the second set starts on the table top as the previous
hand, and the virtual players push everything on the table top into the
tray the moment the four new walls are up, so the next set can be built
during the hand. With one set, call `players_clear_table()` at a hand's end.

Power: `power_cut()` (or the fault power_cut:<s>) and a watchdog that is
not fed in time turn every output off and `halt_reason` says why;
`advance_to` returns at that moment. Outputs and UART bytes are then
ignored until `boot()` (the firmware's HELLO). The machine keeps its
physical state; motors stay off until the new firmware turns them on.

`lower_bound()` is defined in bound.py's docstring: the finish an ideal
controller would reach with the gap sequences this run drew. It, the log
and the counters are table_records.py's; what the technician's hands do to
the lanes and the sets (`technician_*`) is technician.py's.
"""

import random

from engine_core import rulesets

from . import faults as faultlib
from .config import TableConfig
from .display import DisplayBoard
from .keys import Players
from .lanes import Lane
from .lifters import Lifter
from .plate import Plate
from .rfid import RfidReader
from .table_records import TableRecords
from .technician import TechnicianHands
from .tileset import make_set

MAX_EVENTS_AT_ONE_TIME = 10000      # a model bug, not a busy moment


class VirtualTable(TechnicianHands, TableRecords):
    def __init__(self, seed, config_path=None, ruleset=None, faults=()):
        self.seed = seed
        self.config = TableConfig(config_path)
        self.rules = rulesets.load(ruleset if ruleset is not None else self.config.ruleset)
        self.stacks = self.rules.stacks
        self.now = 0
        self._out = []                  # events not yet handed out by advance_to
        self.physical = {}              # gpio -> what the sensor sees
        self.reported = {}              # gpio -> what the firmware reads (faults)
        self.stuck = {}                 # gpio -> stuck value
        self.outputs = {g: 0 for g, (n, _) in self.config.names.items()
                        if g not in self.config.inputs}
        self.log = []                   # (t, source, index, what, *detail)
        self.errors = []                # (t, what, detail): firmware did something wrong
        self.buzzer = []                # (t, value) of every change
        self.halt_reason = None         # "power_cut" | "watchdog" until boot()
        self.controller_on = True
        self.power_cut_at = None
        self.wdt_deadline = None
        self.boots = 0
        self._halted_now = False
        self.fault_rng = self._rng("faults")

        self.plate = Plate(self, self._rng("plate"))
        self.lifters = [Lifter(self, s) for s in range(4)]
        self.lanes = [Lane(self, s, self._rng("lane%d" % s)) for s in range(4)]
        self.rfid = RfidReader(self)
        self.display = DisplayBoard(self)
        self.players = Players(self)
        # Run order matters: lanes read the lifters' position and the plate,
        # so they run over an interval before those move (see advance_to).
        self._devices = self.lanes + [self.plate] + self.lifters + [
            self.rfid, self.display, self.players]
        self.attached = []              # devices added by attach()

        self.top_walls = {s: {} for s in range(4)}     # side -> {slot: tile} in play
        self.pile = []                  # on the table top, not in a wall
        self._new_walls = set()         # sides whose new wall is up since the last push
        self.build_starts = {}          # build number -> first plate-on time
        sets = [make_set(self.rules, i) for i in range(self.config.tile_sets)]
        self.plate.push(sets[0])
        for s in sets[1:]:
            self.pile.extend(s)

        self.faults = []
        for f in faults:
            self.inject(f)

    def _rng(self, name):
        # String seeds hash with SHA-512: the same streams on every run and host.
        return random.Random("vtable:%s:%s" % (self.seed, name))

    # -- inputs (sensors) --------------------------------------------------

    def init_input(self, pin, value):
        self.physical[pin] = value
        self.reported[pin] = value

    def emit(self, pin, value):
        """A sensor's physical level changed now; report it unless stuck."""
        self.physical[pin] = value
        if pin in self.stuck or self.reported[pin] == value:
            return
        self.reported[pin] = value
        self._out.append(("in", pin, value, self.now))

    def stick(self, pin, value):
        self.stuck[pin] = value
        if self.reported[pin] != value:
            self.reported[pin] = value
            self._out.append(("in", pin, value, self.now))

    def unstick(self, pin):
        self.stuck.pop(pin, None)
        self.emit(pin, self.physical[pin])

    def inputs(self):
        """{gpio: level} the firmware would read now."""
        return dict(self.reported)

    def uart_out(self, uart, data):
        self._out.append(("uart", uart, bytes(data), self.now))

    # -- the firmware's side -----------------------------------------------

    def set_output(self, pin, value, t=None):
        """The firmware set an output (0/1, or a PWM duty) at t (default:
        now; a later t runs the physics there first)."""
        self._catch_up(t)
        if not self.controller_on:
            self.log_event("table", None, "output ignored (controller off)", pin, value)
            return
        name, index = self.config.names.get(pin, (None, None))
        if name is None or pin in self.config.inputs:
            self.firmware_error("not an output", pin)
            return
        if self.outputs[pin] != value:
            self.log_event("out", None, self.config.label(pin), value)
        self.outputs[pin] = value
        if name == "plate_motor":
            was = self.plate.duty
            self.plate.set_duty(value)
            if was == 0 and self.plate.duty > 0:
                build = min(len(lane.walls) for lane in self.lanes) - 1
                self.build_starts.setdefault(build, self.now)
        elif name == "lane_feed":
            self.lanes[index].feed = bool(value)
        elif name == "lift_up":
            self.lifters[index].set_drive(up=value)
        elif name == "lift_down":
            self.lifters[index].set_drive(down=value)
        elif name == "buzzer":
            if not self.buzzer or self.buzzer[-1][1] != value:
                self.buzzer.append((self.now, value))

    def uart_write(self, uart, data, t=None):
        """Bytes the firmware wrote on UART 1 (display) or 2 (RFID) at t."""
        self._catch_up(t)
        if not self.controller_on:
            return
        if uart == 1:
            self.display.receive(bytes(data), self.now)
        elif uart == 2:
            self.rfid.receive(bytes(data), self.now)
        else:
            self.firmware_error("no such uart", uart)

    def feed_watchdog(self, timeout_ms):
        if self.controller_on:
            self.wdt_deadline = self.now + timeout_ms if timeout_ms else None

    def boot(self, version=None):
        """The firmware said HELLO: a fresh controller, every output off."""
        self.boots += 1
        self.controller_on = True
        self.halt_reason = None
        self.wdt_deadline = None
        self._all_outputs_off()
        self.log_event("table", None, "boot", version)
        for d in self.attached:             # the players go on (a cut paused them)
            if hasattr(d, "power_on"):
                d.power_on(self.now)
        return self.inputs()

    def power_cut(self):
        self._halt("power_cut")

    def _halt(self, reason):
        self.halt_reason = reason
        self._halted_now = True
        self._all_outputs_off()
        self.controller_on = False
        self.wdt_deadline = None
        if reason == "power_cut":
            self.power_cut_at = None        # one-shot: no longer an active fault
            self.faults = [f for f in self.faults if f.kind != "power_cut"]
            self.display.power_off(self.now)
            self.rfid.power_off()
            for d in self.attached:         # the players wait for the light
                if hasattr(d, "power_off"):
                    d.power_off(self.now)
        self.log_event("table", None, reason)

    def _all_outputs_off(self):
        on = self.controller_on
        self.controller_on = True
        for pin, value in list(self.outputs.items()):
            if value:
                self.set_output(pin, 0)
        self.controller_on = on

    # -- time --------------------------------------------------------------

    def advance_to(self, t):
        """Run the physics to virtual time t (or to a power cut or watchdog
        reset before it). Returns every ("in", pin, value, at) and
        ("uart", uart, bytes, at) since the last call, in time order."""
        self._catch_up(t)
        out, self._out = self._out, []
        return out

    def _catch_up(self, t):
        if t is None:
            return
        self._halted_now = False
        same_time = 0
        while True:
            tn = self._next_time()
            if tn is None or tn > t:
                if t > self.now:
                    self._run(t - self.now)
                    self.now = t
                return
            if tn > self.now:
                self._run(tn - self.now)
                self.now = tn
                same_time = 0
            same_time += 1
            if same_time > MAX_EVENTS_AT_ONE_TIME:
                raise RuntimeError("virtual table: no progress at t=%d" % self.now)
            for d in self._devices:
                d.fire(self.now)
            if self.power_cut_at is not None and self.now >= self.power_cut_at:
                self._halt("power_cut")
            elif self.wdt_deadline is not None and self.now >= self.wdt_deadline:
                self._halt("watchdog")
            if self._halted_now:
                return

    def _next_time(self):
        best = None
        now = self.now
        for d in self._devices:
            tn = d.next_time(now)
            if tn is not None and (best is None or tn < best):
                best = tn
        for tn in (self.power_cut_at, self.wdt_deadline):
            if tn is not None and (best is None or tn < best):
                best = max(tn, now)
        return best

    def _run(self, dt):
        for d in self._devices:
            d.run(dt)

    # -- walls and players ---------------------------------------------------

    def wall_reached_top(self, side, now):
        lane = self.lanes[side]
        if not lane.wall.tiles:
            return                      # an empty platform went up
        self.pile.extend(self.top_walls[side].values())
        self.top_walls[side] = lane.wall.slots()
        lane.platform_left(now)
        self._new_walls.add(side)
        if len(self._new_walls) == 4:
            self._new_walls.clear()
            self.log_event("table", None, "walls up; pile into the tray", len(self.pile))
            self.plate.push(self.pile)
            self.pile = []
            self.players.walls_up(now)
            for d in self.attached:     # e.g. hand_players.HandPlayers
                d.walls_up(now)

    def attach(self, device):
        """Run `device` on this clock like the built-in devices
        (next_time/run/fire) and tell it `walls_up(now)` when four new walls
        are up (after the seat keys are told)."""
        self.attached.append(device)
        self._devices.append(device)

    def players_take(self, slot):
        """A player takes the tile at `slot` from the walls in play into
        a hand (on the table top: it goes to the tray with the rest)."""
        tile = self.top_walls[slot // (2 * self.stacks)].pop(slot)
        self.pile.append(tile)
        return tile

    def players_clear_table(self):
        """End of a hand with one tile set: everything on the table top
        goes into the tray."""
        for side in range(4):
            self.pile.extend(self.top_walls[side].values())
            self.top_walls[side] = {}
        self.plate.push(self.pile)
        self.pile = []

    # -- faults ------------------------------------------------------------

    def inject(self, text):
        f = faultlib.parse(text, self.config)
        faultlib.inject(self, f)
        self.faults.append(f)
        self.log_event("fault", None, "inject", f.text)
        return f.text

    def clear_fault(self, name):
        """Repair every active fault named `name` (a full fault string or
        its leading part). Returns the fault strings repaired."""
        done = [f for f in self.faults if faultlib.matches(f, name)]
        for f in done:
            faultlib.repair(self, f)
            self.faults.remove(f)
            self.log_event("fault", None, "clear", f.text)
        return [f.text for f in done]

    @property
    def active_faults(self):
        return [f.text for f in self.faults]
