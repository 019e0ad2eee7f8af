"""How a production image runs the table (docs/security.md, The
production image): `start(hal, reset, config, tags, table)`, called by
the board's frozen main.py (firmware/image/FUZHOU_TABLE_S3/) with the
ESP32 HAL and machine.reset, and by the twin's production entry with the
sim HAL (host_tools/image/mpenv.py, TWIN_BOOT_PRODUCTION), which the
tests boot as the board boots (host_tools/tests/test_production.py).

The entry has already turned Ctrl-C off and left only frozen modules
importable. The REPL then never gets a turn: run() never returns, and
whatever escapes it (a bug or MemoryError at boot, an exception of the
loop's own sleep) turns every output off, says `firmware_error` on the
link for a while and resets the board. A bench image (not production)
calls run() itself, and such an exception ends at MicroPython's REPL,
where a developer reads it.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

from firmware.faults import FIRMWARE_ERROR as _FIRMWARE_ERROR
from firmware.hal import ticks_add, ticks_diff

# How long a production board says firmware_error before it resets: long
# enough for a host that polls status every second to read it.
_REPORT_MS = const(3000)


def start(hal, reset, config, tags, table):
    """run() as a production image runs it: it never returns. `reset()`
    restarts the board (machine.reset on the ESP32)."""
    try:
        from firmware.main import run
        run(hal, config, tags, "", True, table)
    except BaseException as e:     # KeyboardInterrupt and SystemExit too: never the REPL
        failed(hal, reset, e, table)
    reset()


def failed(hal, reset, e, table):
    """Every output off, the exception on the link as fault 50 for
    _REPORT_MS (hello and status answered, everything else refused), then
    a reset. Whatever fails here (no heap for the link) goes straight to
    the reset."""
    try:
        hal.all_off()
        reason = "%s: %s" % (type(e).__name__, e)
        from firmware.image_build import BUILD  # pyright: ignore[reportMissingImports]
        from firmware.link.server import LinkServer
        link = LinkServer(hal, "?", BUILD, table, None, True)
        detail = {"reason": reason}
        link.boot_fault(_FIRMWARE_ERROR, detail)
        link.emit("fault", {"code": _FIRMWARE_ERROR, "name": link.fault_name, "detail": detail})
        t = hal.ticks_ms()
        end = ticks_add(t, _REPORT_MS)
        while ticks_diff(end, t) > 0:
            link.poll(t)
            hal.wdt_feed()
            hal.sleep_until(ticks_add(t, 50))
            t = hal.ticks_ms()
    finally:
        reset()
