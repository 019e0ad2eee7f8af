"""The hardware-in-the-loop harness: one `Target` per test, whatever runs
the firmware.

    SimTarget     the real firmware under the MicroPython unix port on the
                  virtual table (host_tools/sim/launcher.py SimTable): the default
    QemuTarget    the board's image on the esp32 port in QEMU on the same
                  virtual table (host_tools/sim/qemu.py QemuTable): --qemu
    BoardTarget   a real controller on `--port`; the board plays the real table
    BenchTarget   a real controller on `--port` whose sim bus is the PC's
                  serial port `--bus`: a VirtualTable plays the table

Every wait has a wall-clock guard (WAIT_S): a firmware or model bug fails the
test, it never hangs the suite. Nothing sleeps to wait for the virtual table:
the harness waits on link events, or on the virtual clock (a `status`
request answers with the controller's time, which is the table's time).

Calls into the VirtualTable from a test (inject a fault, repair it, press a
key, read its state) run in the bus thread between two TICKs
(`Target.in_table`), never concurrently with its physics.
"""

import json
import os
import queue
import tempfile
import threading
import time
from collections import Counter

from host_tools.texts import faults as fault_table
from firmware import frame
from firmware.controller.saved_state import RECORD_FILE
from firmware.sealed import Sealer
from host_tools.link import codec as link_codec
from host_tools.link.client import LinkClient, LinkError
from host_tools.cli.ops import HAND_WALL_TIMEOUT_S, describe_fault, public_state

WAIT_S = 30.0              # wall-clock guard on every wait
OUTPUT_GROUPS = ("plate_motor", "lane_feed", "lift_up", "lift_down", "buzzer")


# The MicroPython heap the virtual table's firmware must run in: the twin's
# (32-bit, the firmware frozen in, as on the board), three quarters of the
# ESP32-S3 port's first heap area (64 KB: the rest is the margin for what
# the esp32 port holds that the unix port does not). Tests run the cycle,
# the fault matrix, a whole hand, the technician's readings and a service
# session in this much, so that growth shows at once; make bench measures
# the smallest heap each needs (docs/performance.md).
HEAP_BUDGET = 48 * 1024
SERVICE_HEAP_BUDGET = HEAP_BUDGET     # one budget: the board has no more for a visit


class HarnessError(AssertionError):
    """A wait ran out or the target misbehaved; the message says what was seen."""


# -- running code in the virtual table's own thread ---------------------------

class TableHook:
    """Wraps `table.advance_to` (called by the bus server for every TICK)
    so that test code runs in the bus thread, between TICKs: `call(fn)` at
    the next TICK, `at(t, fn)` exactly at virtual time t (the physics runs to
    t, fn runs, then the rest of the TICK), `when(cond, fn)` at the start of
    the first TICK at which cond() holds (a physical condition, e.g. a lane
    has stacked n tiles: reproducible from the seed, unlike wall time)."""

    def __init__(self, table):
        self.table = table
        self._orig = table.advance_to
        self._now = queue.Queue()
        self._timed = []           # (t, n, fn), sorted
        self._conds = []           # (cond, fn)
        self._n = 0
        self._lock = threading.Lock()
        self.errors = []           # exceptions of timed callbacks
        table.advance_to = self._advance_to

    def _advance_to(self, t):
        self._run_now()
        if self._conds:
            self._run_conds()
        out = []
        while True:
            with self._lock:
                due = self._timed[0] if self._timed and self._timed[0][0] <= t else None
                if due is not None:
                    self._timed.pop(0)
            if due is None:
                break
            out.extend(self._orig(max(due[0], self.table.now)))
            if self.table.halt_reason is not None:     # power cut first: keep it for later
                with self._lock:
                    self._timed.insert(0, due)
                return out
            try:
                due[2]()
            except Exception as e:        # reported by the test that scheduled it
                self.errors.append((due[0], repr(e)))
        out.extend(self._orig(t))
        return out

    def _run_now(self):
        while True:
            try:
                fn, box, done = self._now.get_nowait()
            except queue.Empty:
                return
            try:
                box.append((True, fn()))
            except BaseException as e:
                box.append((False, e))
            done.set()

    def _run_conds(self):
        with self._lock:
            conds = list(self._conds)
        for entry in conds:
            try:
                if entry[0]():
                    with self._lock:
                        self._conds.remove(entry)
                    entry[1]()
            except Exception as e:
                self.errors.append((self.table.now, repr(e)))

    def call(self, fn, timeout=WAIT_S):
        """fn() in the bus thread at the next TICK; its result (or exception)."""
        done = threading.Event()
        box = []
        self._now.put((fn, box, done))
        if not done.wait(timeout):
            raise HarnessError("the virtual table did not tick for %.0f s (firmware dead?)" % timeout)
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def when(self, cond, fn):
        """fn() in the bus thread at the first TICK where cond() is true."""
        with self._lock:
            self._conds.append((cond, fn))

    def at(self, t, fn):
        """fn() in the bus thread when the table's virtual time reaches t."""
        with self._lock:
            self._n += 1
            self._timed.append((t, self._n, fn))
            self._timed.sort(key=lambda e: e[:2])


# -- one cycle as the link saw it ----------------------------------------------

class Cycle:
    """The events of one `start` up to dice or a fault."""

    def __init__(self, events):
        self.events = events
        self.started = self.first("state", state="building")
        self.walls = self.first("walls")
        self.dice = self.first("dice")
        self.fault = self.first("fault")

    def first(self, ev, **fields):
        for e in self.events:
            if e["ev"] == ev and all(e.get(k) == v for k, v in fields.items()):
                return e
        return None

    def all(self, ev):
        return [e for e in self.events if e["ev"] == ev]

    @property
    def ok(self):
        return self.dice is not None and self.fault is None

    @property
    def table_time_ms(self):
        return self.dice["t"] - self.started["t"]

    def __repr__(self):
        return "Cycle(%s)" % json.dumps(self.events)


# -- targets --------------------------------------------------------------------

class Target:
    """What a test talks to. `.link` is a connected LinkClient (hello done),
    `.sim` the SimTable or None, `.table` the VirtualTable or None.
    `wait_s`: the wall-clock guard of every wait (a real table is slow)."""

    kind = "?"
    sim = None
    table = None
    hook = None
    wait_s = WAIT_S
    hand_wall_s = HAND_WALL_TIMEOUT_S   # a whole hand (host_tools/cli/ops.py run_hand)
    link_timeout_s = 1.0       # a request's attempt (LinkClient's timeout)
    live_fuzz_frames = 20000   # test_link's damaged frames (make soak sends more: docs/reliability.md)

    def __init__(self):
        self.link = None
        self.history = []          # every event this harness has taken off the link
        self.hello_info = None

    # -- link --------------------------------------------------------------

    def _hello(self):
        deadline = time.monotonic() + self.wait_s
        while True:                 # the first hello can meet a controller still booting
            try:
                self.hello_info = self.link.hello()
                return self.hello_info
            except LinkError as e:
                if e.code != "timeout" or time.monotonic() > deadline or self.dead():
                    raise HarnessError("no hello answer (%s)\n%s" % (e, self.diagnostics())) from e

    def dead(self):
        """The firmware is known to be gone (sim: its process exited)."""
        return False

    def connect(self, port):
        """A LinkClient on `port` with this target's answer time."""
        return LinkClient(port, timeout=self.link_timeout_s)

    def request(self, op, **args):
        return self.link.request(op, **args)

    def status(self):
        return self.link.request("status")

    def next_event(self, timeout=None):
        ev = self.link.next_event(self.wait_s if timeout is None else timeout)
        if ev is not None:
            self.history.append(ev)
        return ev

    def drain(self):
        """Take every queued event (kept in history); returns them."""
        out = []
        while True:
            ev = self.link.next_event(0)
            if ev is None:
                return out
            self.history.append(ev)
            out.append(ev)

    def wait_event(self, pred, what, timeout=None):
        """The first event with pred(ev); events before it stay queued."""
        timeout = self.wait_s if timeout is None else timeout
        try:
            ev = self.link.wait_event(pred, timeout=timeout)
        except LinkError as e:
            if e.code != "timeout":
                raise
            raise HarnessError("no %s event within %.0f s wall; queued: %s"
                               % (what, timeout, list(self.link._events))) from None
        self.history.append(ev)
        return ev

    def wait_state(self, state, timeout=None):
        return self.wait_event(lambda e: e["ev"] == "state" and e["state"] == state,
                               "state=%s" % state, timeout)

    def collect(self, stop=("dice", "fault"), timeout=None):
        """Events until one whose `ev` is in `stop` (inclusive)."""
        timeout = self.wait_s if timeout is None else timeout
        events = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ev = self.next_event(left) if left > 0 else None
            if ev is None:
                raise HarnessError("no %s event within %.0f s wall; events: %s"
                                   % ("/".join(stop), timeout, json.dumps(events)))
            events.append(ev)
            if ev["ev"] in stop:
                return events

    def start(self):
        """`start` over the link (events queued before it are drained)."""
        self.drain()
        answer = self.request("start")
        assert answer["state"] == "building", answer
        return answer

    def run_cycle(self, timeout=None):
        """`start`, then every event to the dice (or a fault)."""
        self.start()
        return Cycle(self.collect(timeout=timeout))

    def follow_cycle(self, timeout=None):
        """Events to the dice or a fault, without sending `start`."""
        return Cycle(self.collect(timeout=timeout))

    def wait_status(self, pred, what, virtual_ms=60000, timeout=None):
        """Ask `status` until pred(status) holds; fails after `virtual_ms` of
        the controller's clock or the wall-clock guard. Each answer costs a
        control tick: this waits on the virtual clock, it never sleeps."""
        timeout = self.wait_s if timeout is None else timeout
        deadline = time.monotonic() + timeout
        first = None
        while True:
            st = self.status()
            if pred(st):
                return st
            first = st["uptime"] if first is None else first
            if st["uptime"] - first > virtual_ms or time.monotonic() > deadline:
                raise HarnessError("status never showed %s (last: %s)" % (what, st))

    def wait_virtual(self, t_ms, timeout=None):
        """Wait until the controller's clock (the virtual table's under the
        sim) has reached t_ms; returns the status that showed it."""
        return self.wait_status(lambda st: st["uptime"] >= t_ms, "uptime >= %d" % t_ms,
                                virtual_ms=1 << 30, timeout=timeout)

    def timing(self, name):
        """A timing of the controller's config (config_get)."""
        pairs = self.request("config_get", key="timings")["value"]
        return dict(pairs)[name]

    # -- the virtual table ------------------------------------------------------

    def in_table(self, fn):
        """fn() run in the virtual table's bus thread between two TICKs."""
        if self.hook is None:
            raise HarnessError("no virtual table on this target")
        return self.hook.call(fn, self.wait_s)

    def at_virtual(self, t_ms, fn):
        if self.hook is None:
            raise HarnessError("no virtual table on this target")
        self.hook.at(t_ms, fn)

    def when_table(self, cond, fn):
        if self.hook is None:
            raise HarnessError("no virtual table on this target")
        self.hook.when(cond, fn)

    def wait_table_time(self, dt_ms):
        """Wait until the virtual table's clock has moved dt_ms on, without
        asking the controller anything (a quiet link)."""
        if self.hook is None:            # a real board: its clock is the wall's
            time.sleep(dt_ms / 1000.0)
            return
        reached = threading.Event()
        self.hook.at(self.in_table(lambda: self.table.now) + dt_ms, reached.set)
        if not reached.wait(self.wait_s):
            raise HarnessError("the virtual clock did not move %d ms on" % dt_ms)

    def table_log(self):
        return list(self.table.log)

    def output_labels(self):
        cfg = self.table.config
        return sorted(cfg.label(g) for g, (name, _) in cfg.names.items()
                      if name in OUTPUT_GROUPS)

    def outputs_at(self, t_ms):
        """{label: value} of every output as the virtual table had them at
        t_ms (after everything that happened at t_ms), from its log."""
        state = {label: 0 for label in self.output_labels()}
        for t, source, _index, what, *detail in self.table_log():
            if t > t_ms:
                break
            if source == "out":
                state[what] = detail[0]
        return state

    def output_changes(self, since=0, until=None):
        """(t, label, value) of every output change in [since, until]."""
        return [(t, what, detail[0]) for t, source, _i, what, *detail in self.table_log()
                if source == "out" and t >= since and (until is None or t <= until)]

    # -- diagnostics ---------------------------------------------------------

    def diagnostics(self):
        parts = ["target: %s" % self.kind]
        if self.link is not None:
            parts.append("link stats: %s" % self.link.stats())
            parts.append("events seen (last 40): %s" % json.dumps(self.history[-40:]))
            queued = list(self.link._events)
            if queued:
                parts.append("events still queued: %s" % json.dumps(queued[-40:]))
            if self.link.rejected:
                parts.append("rejected frames: %r" % list(self.link.rejected)[-10:])
        if self.table is not None:
            parts.append("virtual table now=%d halt=%s faults=%s errors=%s counters=%s"
                         % (self.table.now, self.table.halt_reason, self.table.active_faults,
                            self.table.errors, self.table.counters()))
            lines = self.table.log_lines().splitlines()
            parts.append("vtable log (last 80 lines):\n" + "\n".join(lines[-80:]))
        if self.hook is not None and self.hook.errors:
            parts.append("table callback errors: %s" % self.hook.errors)
        if self.sim is not None:
            parts.append("firmware (%s, restarts %d) log:\n%s"
                         % (self.sim.code, self.sim.restarts, self.sim.firmware_log()[-3000:]))
        return "\n".join(parts)

    def close(self):
        if self.link is not None:
            self.link.close()


class SimTarget(Target):
    """The default: firmware under MicroPython on a fresh virtual table."""

    kind = "sim"

    def __init__(self, seed=1, faults=(), heap=None, config_path=None,
                 firmware_config_path=None, setup=None):
        """config_path: the machine (virtual table) and, unless
        firmware_config_path is given, the firmware's config file too.
        firmware_config_path: another file for the firmware only (a broken
        config on a machine that is fine). setup(table): called before the
        firmware boots."""
        super().__init__()
        self.sim = self._table(seed, faults, heap, config_path)
        if firmware_config_path is not None:
            # SimTable hands the firmware its config_path when it spawns it;
            # the VirtualTable has already read the machine's file.
            self.sim.config_path = str(firmware_config_path)
        self.table = self.sim.table
        self.hook = TableHook(self.table)
        if setup is not None:
            setup(self.table)
        self.sim.start()
        try:
            self.link = self.connect(self.sim.link_path)
            self._hello()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _table(seed, faults, heap, config_path):
        from host_tools.sim.launcher import SimTable
        return SimTable(seed=seed, faults=faults, heap=heap, config_path=config_path)

    def dead(self):
        return not self.sim.alive or self.sim.proc.poll() is not None

    def close(self):
        super().close()
        self.sim.stop()


class QemuTarget(SimTarget):
    """`--qemu`: the board's image on the esp32 port in QEMU
    (host_tools/sim/qemu.py QemuTable) on a fresh virtual table, the same
    table and virtual time as SimTarget's. The heap is the port's own."""

    kind = "qemu"
    wait_s = 180.0     # QEMU runs the firmware at the host's pace: a cycle's step takes wall seconds
    hand_wall_s = 600.0  # a hand: about a minute in QEMU on this host, more on a busy one
    # An answer that waits on a write to the flash (a service log entry, a
    # config) takes QEMU over a second at times: 8 of 230 refused jogs, each
    # logged, went unanswered in 2 x 1 s on this host.
    link_timeout_s = 5.0
    # A burst of 50 damaged frames (about 900 bytes) overflows the console's
    # 260-byte stdin ring, so the status after it waits out a 5 s attempt
    # (measured: 5 s a burst): 20,000 frames would take 33 minutes, 2,000
    # take about 3 and still send every kind (the test checks).
    live_fuzz_frames = 2000

    @staticmethod
    def _table(seed, faults, heap, config_path):
        from host_tools.sim.qemu import QemuTable
        return QemuTable(seed=seed, faults=faults, config_path=config_path)


class BoardTarget(Target):
    """A real controller on `port`, on the real table: only the link. Each
    test starts with an idle controller, like a fresh virtual table: a
    cycle ends in a hand and only a reboot brings the controller back to
    idle, so a board that is not idle is reset (an RTS pulse on the link
    port: the ESP32 dev-board auto-reset wiring)."""

    kind = "board"
    wait_s = 180.0                 # a real cycle, and a person pressing the dice key
    reset_s = 3.0                  # the board's boot

    def __init__(self, port):
        super().__init__()
        self.link = LinkClient(port)
        try:
            self._hello()
            self.ensure_idle()
        except BaseException:
            self.close()           # else its reader thread would share the port
            raise

    def _forget_power_lost(self):
        """A reset during a cycle (the previous test's) is a power_lost
        fault at boot: clear it, this test starts from idle."""
        st = self.wait_status(lambda st: st["state"] != "boot", "the end of the boot", 5000)
        if st["fault"] and st["fault"]["code"] == 41:
            self.request("clear")
            st = self.status()
        self.drain()
        return st

    def reset_board(self):
        ser = self.link.ser
        try:
            ser.dtr = False
            ser.rts = True
            time.sleep(0.1)        # the board's reset line (real hardware, real time)
            ser.rts = False
        except (OSError, ValueError, AttributeError) as e:
            raise HarnessError("cannot reset the controller through %s (%s): reset it by "
                               "hand and run the test again" % (ser.port, e)) from e

    def ensure_idle(self):
        st = self.status()
        if st["state"] == "idle":
            return
        self.reset_board()
        time.sleep(self.reset_s)
        self._hello()
        st = self._forget_power_lost()
        if st["state"] != "idle":
            raise HarnessError("the controller is %s, not idle, after a reset: reset it by "
                               "hand (status %s)" % (st["state"], st))
        self.drain()


class BenchTarget(BoardTarget):
    """A real controller on `port` whose hardware bus is this PC's serial
    port `bus`: a fresh VirtualTable plays the table (fault injection
    works). The board is reset so that it boots on that table; a power cut
    or a watchdog reset of the model resets it again."""

    kind = "bench"
    wait_s = 60.0
    power_off_ms = 500

    def __init__(self, port, bus, seed=1, faults=(), setup=None):
        Target.__init__(self)
        import serial
        from host_tools.sim.bus import BusServer
        from host_tools.sim.table import VirtualTable
        self.table = VirtualTable(seed, faults=tuple(faults))
        self.hook = TableHook(self.table)
        if setup is not None:
            setup(self.table)
        self.server = BusServer(serial.Serial(bus, 115200, timeout=0.02), self.table)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="bench-bus", daemon=True)
        self._thread.start()
        try:
            self.link = LinkClient(port)
            self.reset_board()
            self._hello()
            self.ensure_idle()
        except BaseException:
            self.close()
            raise

    def _serve(self):
        while not self._stop.is_set():
            reason = self.server.serve(stop=self._stop.is_set)
            if reason in ("power_cut", "watchdog") and not self._stop.is_set():
                self.table.advance_to(self.table.now + self.power_off_ms)
                self.reset_board()
                continue
            return

    def ensure_idle(self):
        # The board booted on this fresh table; reset in the middle of the
        # previous test's cycle, it reports power_lost (its marker in flash).
        self._forget_power_lost()

    def close(self):
        self._stop.set()
        self._thread.join(5)
        super().close()
        self.server.serial.close()


# -- power cuts on the virtual table ----------------------------------------------

def cut_power_when(target, cond, while_off=None, note=None):
    """Cut the virtual table's power at the first TICK where cond(table)
    holds (a physical moment, reproducible from the seed), then
    while_off(table): what a person does while the power is off. Returns a
    list that holds, once the cut has come, (t, note(table)): the cut's
    virtual time and what the test wants of the table at that moment."""
    table = target.table
    cuts = []

    def cut():
        cuts.append((table.now, note(table) if note is not None else None))
        table.power_cut()
        if while_off is not None:
            while_off(table)
    target.when_table(lambda: cond(table), cut)
    return cuts


def boot_after(target, cut_t):
    """The time of the boot a cut at cut_t made: the latest boot at or
    after it, not the first, because a cut in the table's first
    millisecond shares its time with the table's first boot."""
    boots = [t for t, source, _i, what, *_ in target.table_log()
             if t >= cut_t and source == "table" and what == "boot"]
    assert boots, "no boot after %d" % cut_t
    return boots[-1]


# -- the files of the virtual table's flash that name tiles ----------------------

def seal_of(sim, kind):
    """A Sealer (firmware/sealed.py) with the virtual table's key: what the
    firmware seals its `kind` of file with (b"hand", b"walls"), to read a
    file or to write one as someone holding the key would."""
    return Sealer(sim.key, os.urandom, kind)


def saved_record(sim):
    """The hand's record as the firmware last sealed it; None if there is
    none; a str saying why if it does not check."""
    with tempfile.TemporaryDirectory() as folder:
        path = sim.stored_copy(RECORD_FILE, folder)
        try:
            data = None if path is None else seal_of(sim, b"hand").load(path)
        except ValueError as e:
            return "refused: %s" % e
    return None if data is None else json.loads(bytes(data))


def save_record(sim, rec, seal=None):
    """`rec` sealed as the hand's record, as the firmware would (or with
    another `seal`), written while the power is off (change_while_off)."""
    seal = seal_of(sim, b"hand") if seal is None else seal
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, RECORD_FILE)
        seal.save(path, json.dumps(rec).encode())
        with open(path, "rb") as f:
            sim.change_while_off({RECORD_FILE: f.read()})


# -- assertions shared by the test files -----------------------------------------

def assert_fault_described(ev):
    """A fault event with a known code, its name, and cause and fix texts."""
    d = describe_fault(ev)
    assert d["name"] == ev["name"], (d, ev)
    assert d["name"] != "unknown", ev
    assert len(d["cause"]) > 20 and len(d["fix"]) > 20, d
    assert fault_table.code_of(ev["name"]) == ev["code"], ev
    return d


def hand_to_result(target):
    """The hand's states as the link shows them (public, each with its
    `n`) up to its result, for resumed_mismatches against the players'
    scenario; a fault on the way fails the test."""
    observed = []
    while True:
        ev = target.next_event()
        assert ev is not None and ev["ev"] != "fault", ev
        if ev["ev"] == "hand":
            st = public_state(ev)
            st["n"] = ev["n"]
            observed.append(st)
        elif ev["ev"] == "result":
            return observed


def tile_multiset(tiles):
    return Counter(t.code for t in tiles)


def raw_request(seq, obj):
    """A REQUEST frame built by hand (canonical payload)."""
    return frame.encode(link_codec.REQUEST, seq, json.dumps(obj, separators=(",", ":")).encode())


def physical_walls(target):
    """{side: {slot: Tile}} of the walls in play (on the table top), read in
    the virtual table's thread."""
    return target.in_table(lambda: {s: dict(w) for s, w in target.table.top_walls.items()})


def assert_walls_are_the_set(target, per_side):
    """The virtual table's walls in play: `per_side` tiles on each side, in
    that side's slots, and together exactly the ruleset's tiles, each with
    its own tag."""
    walls = physical_walls(target)
    rules = target.table.rules
    per = 2 * rules.stacks
    assert per == per_side, (per, per_side)
    for side in range(4):
        slots = sorted(walls[side])
        assert len(slots) == per_side, "side %d holds %d tiles: %s" % (side, len(slots), slots)
        assert slots == list(range(side * per, (side + 1) * per)), (side, slots)
    tiles = [t for side in range(4) for t in walls[side].values()]
    have = tile_multiset(tiles)
    want = Counter(rules.tile_codes())
    assert have == want, "walls differ from the set: extra %s, missing %s" % (
        dict(have - want), dict(want - have))
    strays = [t for t in tiles if t.extra or t.uid != t.proper_uid()]
    assert not strays, strays
    return walls


def lifter_conflicts(target):
    """Moments when a lifter was driven up and down at once (from the
    virtual table's log), and the model's own lift_both_on errors."""
    state = {}
    bad = []
    for t, label, value in target.output_changes():
        state[label] = value
        for side in range(4):
            if state.get("lift_up:%d" % side) and state.get("lift_down:%d" % side):
                bad.append((t, side))
    return bad + [e for e in target.table.errors if e[1] == "lift_both_on"]
