"""The esp32 port's figures, from the board's QEMU image (make
firmware-qemu; docs/performance.md, The esp32 port in QEMU): the app's size
against its partition, and the GC's own figures (`micropython.mem_info()`
through the sim bus's HEAP report, host_tools/sim/heaplog.py) after the
boot and after a whole cycle, with the heap's real size: whether it ever
grew past its first area. `gc.mem_free()` cannot say that on this port (it
counts the room the heap may still add). Wall times are QEMU's, the
host's pace, not a board's."""

import re
import time

from host_tools.image import board_image, espkit, vfs_image
from host_tools.sim import heaplog
from host_tools.sim.qemu import QemuTable

SEED = 3
_TOTAL = re.compile(r"GC: total: (\d+),")
FIRST_AREA = 64000           # MICROPY_GC_INITIAL_HEAP_SIZE on the S3 (ports/esp32/mpconfigport.h)


def _total(log):
    found = _TOTAL.findall(log)
    return int(found[-1]) if found else None


def measure():
    if not espkit.available():     # asked for by --only
        raise RuntimeError("no ESP32-S3 kit in %s: the esp32 port's figures need it"
                           % espkit.DEFAULT_VENDOR)
    board_image.QEMU_OUT.joinpath("micropython.bin").stat()   # make firmware-qemu made it
    from host_tools.cli.ops import run_cycle
    from host_tools.link.client import LinkClient
    app = (board_image.QEMU_OUT / "micropython.bin").stat().st_size   # the board's app, its QEMU variant
    _offset, factory = vfs_image.partition(board_image.PARTITIONS, "factory")
    t0 = time.monotonic()
    with QemuTable(seed=SEED) as table:
        boot_s = time.monotonic() - t0
        boot = heaplog.report(table, timeout=60)
        with LinkClient(table.link_path) as link:
            link.hello()
            t1 = time.monotonic()
            cycle = run_cycle(table, link)
            cycle_s = time.monotonic() - t1
            after = heaplog.report(table, timeout=60)
        total = _total(table.firmware_log())
    if not cycle.get("ok"):
        raise RuntimeError("the cycle in QEMU failed: %s" % (cycle.get("error") or cycle.get("faults")))
    figures = {"esp32_app_bytes": app, "esp32_heap_boot_used_bytes": boot[0],
               "esp32_heap_cycle_used_bytes": after[0], "esp32_heap_total_bytes": total,
               "esp32_cycle_wall_s": round(cycle_s, 1)}
    details = {"seed": SEED, "factory_partition_bytes": factory,
               "largest_free_block_after_cycle_bytes": after[2],
               "heap_grew": total != FIRST_AREA, "boot_wall_s": round(boot_s, 2),
               "table_time_s": cycle.get("table_time_s"), "runtime": cycle.get("runtime")}
    return figures, details
