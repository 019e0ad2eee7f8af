"""The control loop's steady state allocates nothing (MicroPython only: the
ticks run under heap_lock, where any allocation raises MemoryError).

The real controller and drivers, built from the real config and tag table,
on a HAL of preallocated tables (a logging fake would itself allocate):
idle ticks, then a build in full swing (four lanes counting, the plate
turning), then the walls up with the table waiting for the dealer's key.
"""

import gc

import micropython

from firmware import config, tags
from firmware.controller import builder as bld
from firmware.controller.table import TableController
from firmware.devices import Devices
from firmware.fakes.board import TableHal, events
from firmware.fakes.hal import FIRMWARE_DIR


def test_idle_and_building_ticks_allocate_nothing():
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    table = tags.load(FIRMWARE_DIR + "/tags.txt")
    hal = TableHal()
    pins = cfg.pins
    for pin in pins["lift_bottom"]:
        hal.level[pin] = 1                 # the platforms are down
    ctl = TableController(hal, cfg, Devices(hal, cfg, table), events)
    ctl.boot(0)
    now = 0
    gc.collect()
    micropython.heap_lock()
    try:
        for _ in range(100):               # idle
            now += 10
            ctl.step(now)
    finally:
        micropython.heap_unlock()
    assert ctl.start(now) is None
    now += 10
    ctl.step(now)                          # the builder starts: lanes and plate on
    assert ctl.builder.state == bld.NAMES.index("feeding")
    count = pins["lane_count"]
    rotation = pins["plate_rotation"]
    lanes = ctl.devices.lanes
    gc.collect()
    micropython.heap_lock()
    try:
        for tick in range(1, 3001):        # 30 virtual seconds of building
            now += 10
            if tick % 30 == 0:             # a tile in every lane each 0.3 s
                for lane in range(4):
                    if not lanes[lane].full:
                        hal.edge[count[lane]] += 1
            if tick % 100 == 0:
                hal.edge[rotation] += 1    # one plate turn a second
            ctl.step(now)
            if ctl.builder.state != bld.NAMES.index("feeding"):
                break
    finally:
        micropython.heap_unlock()
    assert [lane.count for lane in lanes] == [36, 36, 36, 36]
    assert ctl.builder.state == bld.AUDITING and ctl.fault == 0

