"""The heap figures of host_tools/bench/heap.py with the telemetry on: the
twin publishing to a real broker (host_tools/fleet/broker.py) all along,
the same runs and targets (image_heap_cycle_telemetry_bytes and the hand,
resume, recut and service ones). A run passes only if, besides heap.py's own
checks, the table's last health message says the telemetry lost nothing:
no payload dropped, no socket lost (a MemoryError in the telemetry counts
as one or the other).

    .venv/bin/python -m host_tools.bench.telemetry_heap [cycle hand resume recut service]

Prints one JSON object: each figure, in bytes (256 B bisection). `make
bench` measures them with heap.py's (the heap group)."""

import contextlib
import json
import os
import sys
import time

from host_tools.bench import heap, simrun
from host_tools.fleet.broker import Broker, table_user
from host_tools.fleet.listen import Listener

SITE, TABLE, PASSWORD = "bench", "t1", "bench-pw"
BACK_MS = 12000                # the telemetry's quiet time after a visit (link/aside.py), and 2 s
BACK_WALL_S = 30.0


def _service_and_back(sim, link):
    """heap.py's visit, then the telemetry back after it: it steps aside
    for a session, so a visit that opens at once may see it publish
    nothing before; its health after the visit is the one checked."""
    if not heap.service_visit(sim, link):
        return False
    t0 = link.request("status")["uptime"]
    end = time.monotonic() + BACK_WALL_S
    while link.request("status")["uptime"] - t0 < BACK_MS:
        if time.monotonic() > end:
            return False
    return heap.clean(sim, link)


RUNS = {"cycle": heap.cycle_ok, "hand": heap.hand_ok, "resume": heap.resume_ok,
        "recut": heap.recut_ok,
        "service": lambda h: simrun.passes(_service_and_back, heap.SERVICE_SEED, h)}


def key(name):
    return "image_heap_%s_telemetry_bytes" % name


def _with_telemetry(base, broker):
    class TelemetryTable(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            with open(os.path.join(self.store, "mqtt.json"), "w") as f:
                json.dump({"host": "127.0.0.1", "port": broker.port, "site": SITE,
                           "table": TABLE, "user": table_user(SITE, TABLE),
                           "password": PASSWORD}, f)
    return TelemetryTable


@contextlib.contextmanager
def on(*modules):
    """A broker for the with block, and every SimTable that `modules` make
    (each module's own name for the class) configured to publish to it."""
    with Broker(tables=[(SITE, TABLE, PASSWORD)]) as broker:
        saved = [m.SimTable for m in modules]
        for m in modules:
            m.SimTable = _with_telemetry(m.SimTable, broker)
        try:
            yield broker
        finally:
            for m, base in zip(modules, saved):
                m.SimTable = base


def _checked(fn, broker):
    """fn(heap) with a subscriber: True only if fn passes and the table's
    last health (after the visit, for a visit) says nothing was dropped
    or lost."""
    def run(h):
        with Listener(broker.port, broker.dashboard) as ln:
            ok = fn(h)
            healths = [m.data for m in ln.seen if m.leaf == "health" and m.data]
        if not ok or not healths:
            return False
        mq = healths[-1]["mqtt"]
        return mq["dropped"] == 0 and mq["errors"] == 0
    return run


def measure(runs, which=tuple(RUNS)):
    """{key(name): bytes} for each run in `which`, each run's bisection
    steps appended to runs[name + "_telemetry"]."""
    out = {}
    with on(simrun) as broker:
        for name in which:
            out[key(name)] = heap.smallest(_checked(RUNS[name], broker), heap.IMAGE_RANGE,
                                           runs.setdefault(name + "_telemetry", []))
    return out


def main(argv):
    print(json.dumps(measure({}, argv or tuple(RUNS)), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
