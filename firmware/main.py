"""The controller's main loop, for both backends.

    run(Esp32Hal("/"), ...)    on the ESP32: the board's main.py (frozen into
                               the image: firmware/image/FUZHOU_TABLE_S3/;
                               or the one make deploy writes)
    firmware.sim_main          under the unix port, on the virtual table (sim HAL)

The loop is fixed-rate: poll the link, step the controller, feed the
watchdog, sleep to the next tick. The controller's and drivers' ticks
allocate nothing while idle and while building (firmware/tests/
test_mpy_loop_alloc.py runs them under heap_lock); the link and the sim
HAL's tick are written the same way, and make bench measures the loop.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import gc

from firmware.faults import CONFIG_INVALID as _CONFIG_INVALID, FIRMWARE_CORRUPT as _FIRMWARE_CORRUPT
from firmware.hal import forget, ticks_add, ticks_diff
from firmware.link.server import LinkServer

_FW_VERSION = const("0.1.0")
_WATCHDOG_MS = const(2000)
# Bytes allocated between two collections once the table runs. The control
# loop allocates nothing; requests and service work do, and MicroPython
# places a new block first-fit above whatever garbage is not yet collected.
# Left to pile up, a request's garbage reaches into the heap's one large
# free block, and a few of its objects, still named by a stale word of the
# C stack (the GC scans the stack conservatively), then split that block
# at the next collection. Collected every 512 B, the garbage stays in the
# small holes below it (864 B of them after the boot, on the twin). A
# collection of the 32 KB twin heap takes about 16 us on the host.
_GC_EVERY = const(512)
# What `TableController` imports that the boot has not, leaves first.
_CONTROLLER_MODULES = const(("engine_core.dice", "engine_core.wall", "engine_core.hand",
                             "engine_core.dealer", "firmware.controller.builder",
                             "firmware.controller.follower", "firmware.controller.keys",
                             "firmware.controller.trip"))


def run(hal, config, tags, root="", required=False, table="esp32"):
    """`config`: the config file's path; `tags`: the tag table's name among
    the HAL's secrets (hal.secret); `root`: where the code and its
    manifest.txt are ("" on a board); `required`: a missing manifest is a
    fault (a board), else a development run; `table`: what `hello` says
    this table is."""
    # The files first (their parsing leaves garbage, and the config's
    # validator leaves the heap with it), then long-lived buffers, then a
    # collection before the drivers: a small heap must not fragment.
    gc.collect()
    build = _image_build()
    frozen = build is not None
    if not frozen:              # files on a filesystem: checked against their manifest
        # The manifest's checker is needed at boot only: forgotten like
        # the config's (below).
        from firmware import manifest
        try:
            build = manifest.check(root, required) or "dev"
        except ValueError as e:            # the manifest's: a file changed or missing
            return _boot_fault(hal, LinkServer(hal, _FW_VERSION, "?", table, None, frozen),
                               _FIRMWARE_CORRUPT, str(e))
        finally:
            forget("firmware.manifest")
    # The config and tags before the controller's modules: their parsing
    # and checking leave garbage best collected while the heap is empty.
    try:
        cfg = _load_config(config)
        name = tags
        from firmware import tags      # the module, in place of the name
        tags = tags.load(name, hal)
    except ValueError as e:                # the config's or the tags': named
        return _boot_fault(hal, LinkServer(hal, _FW_VERSION, build, table, None, frozen),
                           _CONFIG_INVALID, str(e))
    gc.collect()
    # The link and the drivers, with their long-lived buffers, before the
    # controller's modules: low in the heap, not in the holes the imports
    # leave (a hand fits in 1 KB less). The link needs the table's service
    # key (32 bytes, make flash ERASE=1 or make deploy provisions it), or
    # None: then every service session is refused, saying why.
    key = None
    try:
        with hal.secret("service.key") as f:
            key = f.read()
    except OSError:
        pass
    link = LinkServer(hal, _FW_VERSION, build, table, key if key and len(key) == 32 else None,
                      frozen)
    from firmware.devices import Devices
    devices = Devices(hal, cfg, tags)
    cfg.pins = None                # the drivers hold their pins now: free the dict
    gc.collect()
    # The controller's modules only now (after the manifest: had one been
    # missing, importing it would have been an ImportError with no link to
    # say so), and what importing them left collected before the
    # controller's objects go in (without it a cycle needs 512 B more on
    # the twin; a collection after each module saves nothing more:
    # docs/heap-idioms.md, 7b).
    if not frozen:
        # From .mpy files each module's code goes into the heap as it is
        # imported: collected after each, the next one's import fills the
        # holes the last one left (a cycle from `make mpy`'s files needs
        # 2 KB less). Frozen code is in flash: there it saves nothing
        # (docs/heap-idioms.md, 7b).
        for name in _CONTROLLER_MODULES:
            __import__(name)
            gc.collect()
    from firmware.controller.table import TableController
    from firmware.controller.trip import crashed
    if frozen:                 # .mpy files: their code would be in the heap at once (22 KB)
        _grow_module_tables()
    gc.collect()
    ctl = TableController(hal, cfg, devices, link.emit)
    tick = cfg.timings["tick_ms"]
    cfg.timings = None             # the drivers and the controller hold theirs now
    gc.collect()
    link.attach(ctl)
    _telemetry(link, ctl)
    _forget_boot_code()
    gc.collect()
    gc.threshold(_GC_EVERY)
    hal.sleep_until(hal.ticks_ms())          # learn the time (sim: first TICK)
    hal.wdt_start(_WATCHDOG_MS)
    ctl.boot(hal.ticks_ms())
    t = hal.ticks_ms()
    while True:
        now = hal.ticks_ms()
        try:
            link.poll(now)
            ctl.step(now)
            # What the step noted for the flash, written after it, never
            # inside it (TableController.write): the tick's reads and
            # outputs are done, a write only shortens the sleep.
            ctl.write()
        except Exception as e:             # a bug: stop every motor, say so, go on
            crashed(ctl, now, e)
        hal.wdt_feed()
        t = ticks_add(t, tick)
        if ticks_diff(t, hal.ticks_ms()) <= 0:   # overran a tick: do not try to catch up
            link.overruns += 1
            t = ticks_add(hal.ticks_ms(), tick)
        # A request that arrives while the loop sleeps is answered at once,
        # not at the next tick; the sleep still ends at t (the HAL returns
        # early only before t), so the host never holds the loop.
        while not hal.sleep_until(t, True):
            try:
                link.poll(hal.ticks_ms())
            except Exception as e:
                crashed(ctl, hal.ticks_ms(), e)


def _telemetry(link, ctl, kept=None):
    """The telemetry (link/telemetry.py) when the table holds its
    settings, the secret mqtt.json: it hooks itself into the controller's
    emit and write. Without them its module is never imported. A function
    of its own: its module is not held by `run`'s frame (the telemetry
    leaves the heap for a visit), and the .mpy cycle needs 256 B less on
    the bench's grid than with these lines in `run` (docs/heap-idioms.md,
    16a). Called again by its hooks (link/mqtthook.py) with the state
    they `kept`, for each turn: the one place that imports the module."""
    try:
        if kept is None:
            link.hal.secret("mqtt.json").close()
        from firmware.link import telemetry
        telemetry.start(link, ctl, kept, _telemetry)
    except OSError:                # no settings: no telemetry
        pass
    except Exception:              # MemoryError: the table plays on without it, seen in status
        link.errors += 1


def _forget_boot_code():
    """The boot's own functions leave the module once the table runs:
    from .mpy files (a development deploy) their code is in the heap, and
    nothing calls them again (the .mpy cycle needs 256 B less on the
    bench's grid; frozen code is in flash, where this saves a few bytes of
    function objects)."""
    g = globals()
    for name in ("_image_build", "_load_config", "_grow_module_tables", "_boot_fault"):
        del g[name]


def _image_build():
    """The image's build id when the firmware runs frozen into MicroPython,
    else None. firmware/image/manifest.py freezes firmware/image_build.py
    with the code; no .py or .mpy tree has that module."""
    try:
        from firmware.image_build import BUILD  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    forget("firmware.image_build")
    return BUILD


def _load_config(path):
    """The checked config. The code that checked it is needed only at boot:
    its modules are forgotten so that their functions leave the heap (the
    Config object has no methods, so nothing holds them)."""
    from firmware import config
    try:
        return config.load(path)
    finally:
        forget("firmware.config")
        forget("engine_core.rulesets")


def _grow_module_tables():
    """Import the most that one request imports for a moment, and forget
    it: config_set's link/service.py, the config's checker and the
    rulesets, all at once; and controller/work.py, the one module a
    request adds to the controller's package (a jog, a scan, a clear;
    controller/kept.py, loaded for a write or a save, is never loaded with
    it, and takes the same slot).
    The tables that name modules (sys.modules, each package's names) grow
    when a request's imports would overfill them, and a grown table stays
    for good: grown here it sits among the controller's buffers; grown
    during a visit it lands in the middle of the free heap and splits it
    (on the twin: a 304-byte sys.modules table and two package tables; the
    largest free block after a visit fell from 4.2 KB to under 1 KB,
    docs/heap-idioms.md). A name forgotten leaves its slot to the next
    one, so the other requests' modules (commands, readouts, hmac, the
    DRBG's: fewer at once, in the same packages) find room; importing them
    here too would grow the tables past what any request needs
    (docs/heap-idioms.md, 12d). Their dotted names are spelled below: a
    name spelled in the frozen code, under 25 characters, is one of the
    image's, and importing the module then makes no name in the heap
    (12g). Frozen code only: from .mpy files (a development deploy) the
    modules' code loads into the heap, and a cycle would need it all for
    the moment they are all there."""
    from firmware.controller import work
    del work
    forget("firmware.controller.work")
    from firmware import config
    from firmware.link import service
    del config, service
    for name in ("firmware.config", "engine_core.rulesets", "firmware.link.service",
                 "firmware.link.commands", "firmware.link.readouts"):
        forget(name)


def _boot_fault(hal, link, code, message):
    """A changed firmware or a bad config: nothing moves; the link still
    answers `hello` and `status` and says why."""
    hal.all_off()
    link.boot_fault(code, message)
    link.emit("fault", {"code": code, "name": link.fault_name, "detail": {"reason": message}})
    t = hal.ticks_ms()
    while True:
        link.poll(hal.ticks_ms())
        t = ticks_add(t, 50)
        hal.sleep_until(t)
