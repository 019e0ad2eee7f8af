"""The controller's main loop, for both backends.

    board()                       on the ESP32 (called by the board's main.py)
    micropython -m firmware.sim_main ...   under the unix port (sim HAL)

The loop is fixed-rate: poll the link, step the controller, feed the
watchdog, sleep to the next tick. Nothing in it allocates in steady state.
"""

try:
    from micropython import const
except ImportError:  # CPython (host-side tests)
    def const(x):
        return x

import gc

from firmware import config as config_mod
from firmware import tags as tags_mod
from firmware.controller.table import TableController
from firmware.devices import Devices
from firmware.hal import ticks_add, ticks_diff
from firmware.link.server import LinkServer

FW_VERSION = "0.1.0"
_WATCHDOG_MS = const(2000)


def run(hal, config_path, tags_path, build="dev"):
    # Long-lived buffers first, then the files (whose parsing leaves garbage),
    # then a collection before the drivers: a small heap must not fragment.
    gc.collect()
    link = LinkServer(hal, FW_VERSION, build)
    try:
        cfg = config_mod.load(config_path)
        tags = tags_mod.load(tags_path)
    except (config_mod.ConfigError, tags_mod.TagError) as e:
        return _config_fault(hal, link, str(e))
    gc.collect()
    ctl = TableController(hal, cfg, Devices(hal, cfg, tags), link.emit)
    cfg.pins = None                # the drivers hold their pins now: free the dict
    gc.collect()
    link.controller = ctl
    hal.sleep_until(hal.ticks_ms())          # learn the time (sim: first TICK)
    hal.wdt_start(_WATCHDOG_MS)
    ctl.boot(hal.ticks_ms())
    tick = cfg.tick_ms
    t = hal.ticks_ms()
    while True:
        now = hal.ticks_ms()
        try:
            link.poll(now)
            ctl.step(now)
        except Exception as e:             # a bug: stop every motor, say so, go on
            ctl.crashed(now, e)
        hal.wdt_feed()
        t = ticks_add(t, tick)
        if ticks_diff(t, hal.ticks_ms()) <= 0:   # overran a tick: do not try to catch up
            link.overruns += 1
            t = ticks_add(hal.ticks_ms(), tick)
        hal.sleep_until(t)


def _config_fault(hal, link, message):
    """A bad config: nothing moves; the link still answers and says why."""
    hal.all_off()
    link.config_error = message
    link.emit("fault", {"code": 40, "name": "config_invalid", "detail": {"reason": message}})
    t = hal.ticks_ms()
    while True:
        link.poll(hal.ticks_ms())
        t = ticks_add(t, 50)
        hal.sleep_until(t)


def board():
    """Entry on the ESP32: config and tags from the flash filesystem."""
    from firmware.hal.esp32 import Esp32Hal
    run(Esp32Hal("/"), "config.json", "tags.txt")
