"""The esp32 port's figures, from the board's QEMU image (make
firmware-qemu; docs/performance.md, The esp32 port in QEMU): the app's size
against its partition, and the GC's own figures (`micropython.mem_info()`
through the sim bus's HEAP report, host_tools/sim/heaplog.py) after the
boot and along three of the runs the twin's heap group measures
(heap.py: a cycle, a hand, a hand cut by the power and resumed, the
technician's visit), with the heap's real size: whether it ever grew past
its first area.
`gc.mem_free()` cannot say that on this port (it counts the room the heap
may still add). Wall times are QEMU's, the host's pace, not a board's;
the CPU figures are esp32_cpu.py's, counted in instructions."""

import re
import threading
import time

from host_tools.bench import esp32_cpu, heap
from host_tools.image import board_image, espkit, vfs_image
from host_tools.link.client import LinkClient
from host_tools.sim import heaplog
from host_tools.sim.qemu import QemuTable

_TOTAL = re.compile(r"GC: total: (\d+),")
FIRST_AREA = 64000           # MICROPY_GC_INITIAL_HEAP_SIZE on the S3 (ports/esp32/mpconfigport.h)
WALL_S = 300.0               # a wait of a run in QEMU, at most (the twin's: 30-60 s)
LINK_TIMEOUT_S = 10.0        # a request's answer in QEMU on a busy host, at most
SAMPLE_S = 2.0               # a heap report this often (wall) along a run


def _runs():
    """(name, seed, setup, play) of each run, heap.py's plays."""
    hand = heap.hand_run(heap.HAND_SEED, wall_s=WALL_S)
    resume = heap.hand_run(heap.HAND_SEED, wall_s=WALL_S, cut_after_ms=heap.RESUME_CUT_MS)
    cycle = heap.cycle_run(wall_s=WALL_S)
    service = (None, lambda sim, link: heap.service_visit(sim, link, wall_s=WALL_S))
    return (("cycle", heap.CYCLE_SEED) + cycle, ("hand", heap.HAND_SEED) + hand,
            ("resume", heap.HAND_SEED) + resume, ("service", heap.SERVICE_SEED) + service)


class Sampler:
    """A heap report asked for every SAMPLE_S along a run, in a thread. Each
    costs the firmware a gc.collect() at its next tick; the peak is the
    largest `used` after a collection that a sample saw, not the run's
    exact high-water mark (MicroPython keeps none on this port)."""

    def __init__(self, table):
        self.table = table
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heap-sampler", daemon=True)

    def _run(self):
        while not self._stop.wait(SAMPLE_S):
            if self.table.alive and self.table.server.booted:
                self.table.server.request_heap_report()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_one(name, seed, setup, play):
    """One run in QEMU: {ok, wall_s, samples, peak_used, least_max_free,
    total}, `total` the largest heap size the GC reported."""
    table = QemuTable(seed=seed)
    if setup is not None:
        setup(table.table)
    t0 = time.monotonic()
    with table:
        with LinkClient(table.link_path, timeout=LINK_TIMEOUT_S) as link:
            link.hello()
            with Sampler(table):
                ok = bool(play(table, link))
            last = heaplog.report(table, timeout=60)
        log = table.firmware_log()
    samples = heaplog.samples(log)
    totals = [int(t) for t in _TOTAL.findall(log)]
    return {"run": name, "seed": seed, "ok": ok, "wall_s": round(time.monotonic() - t0, 1),
            "samples": len(samples), "peak_used": max(s[0] for s in samples),
            "least_max_free": min(s[2] for s in samples), "end_used": last[0],
            "total": max(totals) if totals else None}


def measure():
    if not espkit.available():     # asked for by --only
        raise RuntimeError("no ESP32-S3 kit in %s: the esp32 port's figures need it"
                           % espkit.DEFAULT_VENDOR)
    board_image.QEMU_OUT.joinpath("micropython.bin").stat()   # make firmware-qemu made it
    app = (board_image.QEMU_OUT / "micropython.bin").stat().st_size   # the board's app, its QEMU variant
    _offset, factory = vfs_image.partition(board_image.PARTITIONS, "factory")
    with QemuTable(seed=heap.CYCLE_SEED) as table:
        boot = heaplog.report(table, timeout=60)
    runs = [run_one(*r) for r in _runs()]
    failed = [r["run"] for r in runs if not r["ok"]]
    if failed:
        raise RuntimeError("in QEMU, these runs failed: %s" % ", ".join(failed))
    by = {r["run"]: r for r in runs}
    totals = [r["total"] for r in runs if r["total"] is not None]
    figures = {"esp32_app_bytes": app, "esp32_heap_boot_used_bytes": boot[0]}
    for name in ("cycle", "hand", "resume", "service"):
        figures["esp32_heap_%s_peak_bytes" % name] = by[name]["peak_used"]
    figures["esp32_heap_total_bytes"] = max(totals) if totals else None
    figures["esp32_cycle_wall_s"] = by["cycle"]["wall_s"]
    details = {"factory_partition_bytes": factory, "sample_every_s": SAMPLE_S,
               "heap_grew": any(t != FIRST_AREA for t in totals), "runs": runs}
    cpu, details["cpu"] = esp32_cpu.measure()
    figures.update(cpu)
    return figures, details
