"""The link on the virtual table in real time (SimTable(realtime=True),
as `mjctl --sim serve` runs it): boot to the first hello answered, and
the round trip of `status` requests on the wall clock."""

import os
import threading
import time

from host_tools.bench.stats import median, percentile
from host_tools.link.client import LinkClient
from host_tools.sim.launcher import SimTable

BOOTS = 5
REQUESTS = 500
WARMUP = 10
PIPELINE_THREADS, PIPELINE_EACH = 4, 50
HELLO_WALL_S = 5.0


def boot_to_ready(n=BOOTS):
    """Wall ms from SimTable.start() (the firmware process spawned) to its
    hello answer, n boots of the twin (make image builds it beforehand)."""
    times = []
    for seed in range(n):
        sim = SimTable(seed=seed, realtime=True)
        t0 = time.perf_counter()
        sim.start()
        try:
            with LinkClient(sim.link_path) as link:
                link.hello(timeout=HELLO_WALL_S)
                times.append((time.perf_counter() - t0) * 1000.0)
        finally:
            sim.stop()
    return times


def cpu_s(pid):
    """The CPU time (user and system, s) process `pid` has used; None where
    /proc is not there (not Linux)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def round_trips(sim, link, n=REQUESTS):
    """n `status` requests one after the other: each round trip in ms, the
    requests per second over the whole run, and the clocks meanwhile (in
    real time the controller's ticks follow the wall clock, 10 ms each;
    a table that fell behind catches up with ticks in quick succession),
    with the firmware process's CPU time per request (`cpu_ms`, its idle
    ticks included): the machine's load moves it far less than the wall
    clock's figures (docs/performance.md, The link)."""
    for _ in range(WARMUP):
        link.request("status")
    rtts = []
    pid = sim.proc.pid
    c0 = cpu_s(pid)
    v0, k0, t0 = sim.table.now, sim.server.ticks, time.perf_counter()
    for _ in range(n):
        a = time.perf_counter()
        link.request("status")
        rtts.append((time.perf_counter() - a) * 1000.0)
    wall = time.perf_counter() - t0
    c1 = cpu_s(pid)
    clocks = {"wall_ms": round(wall * 1000.0, 1), "virtual_ms": sim.table.now - v0,
              "ticks": sim.server.ticks - k0,
              "cpu_ms": None if c0 is None or c1 is None else round((c1 - c0) * 1000.0 / n, 3)}
    return rtts, n / wall, clocks


def pipelined(sim, link, threads=PIPELINE_THREADS, each=PIPELINE_EACH):
    """`threads` hosts sending `status` back to back at once: requests per
    second, and how far the controller's clock moved meanwhile (its ticks,
    10 ms each, against the wall clock)."""
    def work():
        for _ in range(each):
            link.request("status")
    ts = [threading.Thread(target=work) for _ in range(threads)]
    v0, k0, t0 = sim.table.now, sim.server.ticks, time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    wall = time.perf_counter() - t0
    return {"threads": threads, "requests": threads * each,
            "requests_per_s": round(threads * each / wall, 1),
            "wall_ms": round(wall * 1000.0, 1), "virtual_ms": sim.table.now - v0,
            "ticks": sim.server.ticks - k0}


def measure():
    boots = boot_to_ready()
    with SimTable(seed=0, realtime=True) as sim:
        with LinkClient(sim.link_path) as link:
            link.hello(timeout=HELLO_WALL_S)
            rtts, rps, clocks = round_trips(sim, link)
            pipe = pipelined(sim, link)
    figures = {
        "link_rtt_p50_ms": percentile(rtts, 50),
        "link_rtt_p99_ms": percentile(rtts, 99),
        "link_requests_per_s": rps,
        "image_boot_to_ready_ms": median(boots),
    }
    details = {"requests": len(rtts), "request": "status", "rtt_max_ms": round(max(rtts), 3),
               "rtt_min_ms": round(min(rtts), 3),
               "clocks": clocks, "boots_ms": [round(b, 1) for b in boots], "pipelined": pipe}
    return figures, details
