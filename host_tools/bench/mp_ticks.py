# MicroPython only: run by host_tools/bench/alloc.py as
#     micropython host_tools/bench/mp_ticks.py CODE_ROOT
# with CODE_ROOT (build/mpy, or the project root for the .py sources) as the
# working directory. Prints one JSON line.
#
# The control loop's steady state, in the setups of
# firmware/tests/test_mpy_loop_alloc.py (the real TableController and
# drivers on that test's TableHal of preallocated tables) and
# firmware/tests/test_mpy_follow_alloc.py (the hand follower reading an
# unchanged wall); and idle with the telemetry on (firmware/link/
# telemetry.py), connected, and stepped aside for a service session.
# Each phase runs twice on a fresh setup:
#   locked: N ticks under micropython.heap_lock(), where any allocation
#           raises MemoryError: the ticks done before one (N: none);
#   bytes:  the same N ticks with the GC off, gc.mem_alloc() after minus
#           before (the heap's 16-byte blocks on the unix port).
import gc
import io
import json
import socket
import sys

import micropython

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")

from firmware import config, tags  # noqa: E402
from firmware.controller import builder as bld  # noqa: E402
from firmware.controller.table import TableController  # noqa: E402
from firmware.devices import Devices  # noqa: E402
from firmware.fakes.board import TableHal, events  # noqa: E402
from firmware.fakes.follow import opened  # noqa: E402
from firmware.fakes.hal import FIRMWARE_DIR  # noqa: E402

TICK_MS = 10


class Building:
    """The controller from boot: `idle` ticks, or `start` and a build in
    full swing (a tile in every lane each 0.3 s, a plate turn a second),
    as test_mpy_loop_alloc drives it."""

    def __init__(self, build):
        cfg = config.load(FIRMWARE_DIR + "/config.json")
        table = tags.load(FIRMWARE_DIR + "/tags.txt")
        self.hal = TableHal()
        self.pins = cfg.pins
        for pin in self.pins["lift_bottom"]:
            self.hal.level[pin] = 1
        self.ctl = TableController(self.hal, cfg, Devices(self.hal, cfg, table), events)
        self.ctl.boot(0)
        self.now = 0
        self.count = self.pins["lane_count"]
        self.rotation = self.pins["plate_rotation"]
        self.lanes = self.ctl.devices.lanes
        self.build = build
        self.tick = 0
        if build:
            self.ctl.start(self.now)
            self.step()                    # the builder starts: lanes and plate on
            self.tick = 0

    def step(self):
        self.now += TICK_MS
        self.tick += 1
        if self.build:
            if self.tick % 30 == 0:
                for lane in range(4):
                    if not self.lanes[lane].full:
                        self.hal.edge[self.count[lane]] += 1
            if self.tick % 100 == 0:
                self.hal.edge[self.rotation] += 1
        self.ctl.step(self.now)

    def steady(self):
        return not self.build or self.ctl.builder.state == bld.NAMES.index("feeding")


class Following:
    """The hand follower after the opening, reading an unchanged wall: one
    step per tick, as read_rounds does."""

    def __init__(self):
        self.top = opened()
        self.tick = 0

    def step(self):
        top = self.top
        top.now += TICK_MS
        self.tick += 1
        top.follower.step(top.now, True)

    def steady(self):
        return True


class _Link:
    """What the telemetry reads of the link (firmware/link/server.py)."""
    session_state = 0
    errors = dropped = overruns = 0
    fw_version = "0.1.0"
    build = "bench"

    def __init__(self, hal, ctl):
        self.hal = hal
        self.controller = ctl

    def emit(self, name, fields):
        pass


class _TelemetryHal:
    """The telemetry's clock (the phase's) and its settings."""
    store = "/nonexistent/"

    def __init__(self, clock):
        self.clock = clock

    def ticks_ms(self):
        return self.clock.now

    def secret(self, name):
        # Port 1: the first turn's connect is refused at once (the
        # phase then puts its loopback socket in the connection's place).
        return io.BytesIO(b'{"host": "127.0.0.1", "port": 1, "site": "bench", "table": "t1", '
                          b'"user": "u", "password": "p"}')


def _loopback():
    """A connected TCP socket on 127.0.0.1 (the broker's end kept open by
    the caller): (table's end, broker's end, listener)."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    for port in range(47000, 47200):
        try:
            srv.bind(socket.getaddrinfo("127.0.0.1", port)[0][-1])
            break
        except OSError:
            pass
    srv.listen(1)
    c = socket.socket()
    c.connect(socket.getaddrinfo("127.0.0.1", port)[0][-1])
    s, _ = srv.accept()
    c.setblocking(False)
    return c, s, srv


class Telemetered(Building):
    """Idle ticks with the telemetry on (Telemetry.configured, the
    controller's observer, as main.py makes it), connected over a loopback
    socket in place of the broker's, with nothing to send and no turn due
    (the counters and health, and the ping, later than the phase): its
    poll after each step, as main.py calls it. `aside`: a service session
    open, the telemetry stepped aside."""

    def __init__(self, aside=False):
        Building.__init__(self, False)
        from firmware.link.telemetry import Telemetry
        link = self.link = _Link(_TelemetryHal(self), self.ctl)
        t = self.telemetry = Telemetry.configured(link, self.ctl)
        self.ctl.observer = t
        t.poll(self.now)                   # the first turn: health, and a connect that fails
        self.sock, self.peer, self.srv = _loopback()
        t.client = self.sock
        t.last_rx = t.last_ping = self.now
        t.next_health = t.due = self.now + 3600000
        t.errors = 0
        del t.q[:]
        if aside:
            link.session_state = 1
            self.step()                    # steps aside
            assert t.client is None

    def step(self):
        Building.step(self)
        self.ctl.write()
        self.telemetry.poll(self.now)


def locked(make, n):
    s = make()
    gc.collect()
    done = 0
    micropython.heap_lock()
    try:
        while done < n and s.steady():
            s.step()
            done += 1
    except MemoryError:
        pass
    finally:
        micropython.heap_unlock()
    return done


def allocated(make, n):
    s = make()
    gc.collect()
    gc.disable()
    done = 0
    before = gc.mem_alloc()
    try:
        while done < n and s.steady():
            s.step()
            done += 1
    finally:
        after = gc.mem_alloc()
        gc.enable()
    return done, after - before


def event_bytes():
    """Heap of one change the follower publishes: a draw from the head
    (read twice to be sure, then published: its `hand` event dict)."""
    top = opened()
    wall = top.shadow.wall
    n = len(top.states())
    top.take(wall.geo.slot_of_pos[wall.head_pos()])
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    top.read_rounds(3)
    after = gc.mem_alloc()
    gc.enable()
    return after - before, len(top.states()) - n


PHASES = (
    ("idle", lambda: Building(False), 1000),
    ("building", lambda: Building(True), 1000),       # feeding lasts ~1080 ticks here
    ("hand_unchanged_wall", Following, 1000),
    ("idle_telemetry_connected", Telemetered, 1000),
    ("idle_telemetry_aside", lambda: Telemetered(True), 1000),
)


def main():
    out = {"phases": {}}
    for name, make, n in PHASES:
        done_locked = locked(make, n)
        done, nbytes = allocated(make, n)
        out["phases"][name] = {"ticks": n, "ticks_under_heap_lock": done_locked,
                               "ticks_measured": done, "bytes": nbytes}
    nbytes, published = event_bytes()
    out["hand_event"] = {"bytes": nbytes, "events": published}
    out["version"] = "%d.%d.%d" % sys.implementation.version[:3]
    print(json.dumps(out))


if __name__ == "__main__":      # mp_cpu.py imports the setups
    main()
