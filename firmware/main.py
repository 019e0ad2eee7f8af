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

from firmware import config, manifest, tags as tag_table
from firmware.faults import CONFIG_INVALID as _CONFIG_INVALID, FIRMWARE_CORRUPT as _FIRMWARE_CORRUPT
from firmware.hal import ticks_add, ticks_diff
from firmware.link.server import LinkServer

_FW_VERSION = const("0.1.0")
_WATCHDOG_MS = const(2000)
# Bytes allocated between two collections once the table runs. The control
# loop allocates nothing; requests and service work do, and MicroPython
# places a new block first-fit above whatever garbage is not yet collected.
# Collected this often, a request's garbage stays in the small holes low
# in the heap instead of reaching into its one large free block, where a
# few objects still named by a stale word of the C stack would split it.
_GC_EVERY = const(512)


def run(hal, config_path, tags, root="", required=False, table="esp32"):
    """`config_path`: the config file's path; `tags`: the tag table's name
    among the HAL's secrets (hal.secret); `root`: where the code and its
    manifest.txt are ("" on a board); `required`: a missing manifest is a
    fault (a board), else a development run; `table`: what `hello` says
    this table is."""
    build = _image_build()
    frozen = build is not None
    if not frozen:              # files on a filesystem: checked against their manifest
        try:
            build = manifest.check(root, required) or "dev"
        except ValueError as e:            # the manifest's: a file changed or missing
            return _boot_fault(hal, LinkServer(hal, _FW_VERSION, "?", table, None, frozen),
                               _FIRMWARE_CORRUPT, str(e))
    try:
        cfg = config.load(config_path)
        tag_ids = tag_table.load(tags, hal)
    except ValueError as e:                # the config's or the tags': named
        return _boot_fault(hal, LinkServer(hal, _FW_VERSION, build, table, None, frozen),
                           _CONFIG_INVALID, str(e), getattr(e, "facts", None))
    key = _service_key(hal)
    link = LinkServer(hal, _FW_VERSION, build, table, key, frozen)
    # The controller's modules only now, after the manifest's check: a
    # file missing would otherwise be an ImportError, with no link to say
    # so.
    from firmware.controller.table import TableController
    from firmware.devices import Devices
    from firmware.link.handlers import HANDLERS
    ctl = TableController(hal, cfg, Devices(hal, cfg, tag_ids), link.emit, key)
    link.attach(ctl, HANDLERS)
    telemetry = _telemetry(hal, link, ctl)
    ctl.observer = telemetry  # pyright: ignore[reportAttributeAccessIssue]  (None or an object with event())
    gc.collect()
    gc.threshold(_GC_EVERY)
    hal.sleep_until(hal.ticks_ms())          # learn the time (sim: first TICK)
    hal.wdt_start(_WATCHDOG_MS)
    ctl.boot(hal.ticks_ms())
    _loop(hal, link, ctl, telemetry, cfg.timings["tick_ms"])


def _loop(hal, link, ctl, telemetry, tick):
    """The control loop, every `tick` ms, for good."""
    from firmware.controller.safe_stop import crashed   # after the manifest's check (run)
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
            if telemetry is not None:
                telemetry.poll(now)
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


def _service_key(hal):
    """The table's service key (32 bytes, make flash ERASE=1 or make
    deploy provisions it), or None: then the link refuses every service
    session, saying why, and the controller keeps no hand's tiles in the
    flash (firmware/sealed.py)."""
    try:
        with hal.secret("service.key") as f:
            key = f.read()
    except OSError:
        return None
    return key if len(key) == 32 else None


def _telemetry(hal, link, ctl):
    """The telemetry (link/telemetry.py) when the table holds its settings,
    the secret mqtt.json, else None: it hears the controller's events and
    has a turn after each step. Without them its module is not imported:
    in the .mpy form its code would take 6 KB of heap for nothing
    (docs/heap-idioms.md)."""
    try:
        hal.secret("mqtt.json").close()
    except OSError:
        return None
    from firmware.link.telemetry import Telemetry
    return Telemetry.configured(link, ctl)


def _image_build():
    """The image's build id when the firmware runs frozen into MicroPython,
    else None. firmware/image/manifest.py freezes firmware/image_build.py
    with the code; no .py or .mpy tree has that module."""
    try:
        from firmware.image_build import BUILD  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    return BUILD


def _boot_fault(hal, link, code, message, facts=None):
    """A changed firmware or a bad config: nothing moves; the link still
    answers `hello` and `status` and says why, with the facts a host says
    it by (a config's: config.SettingError)."""
    hal.all_off()
    detail = dict(facts or {}, reason=message)
    link.boot_fault(code, detail)
    link.emit("fault", {"code": code, "name": link.fault_name, "detail": detail})
    t = hal.ticks_ms()
    while True:
        link.poll(hal.ticks_ms())
        t = ticks_add(t, 50)
        hal.sleep_until(t)
