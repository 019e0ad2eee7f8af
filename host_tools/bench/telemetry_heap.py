"""The heap figures of host_tools/bench/heap.py with the telemetry on: the
twin publishing to a real broker (host_tools/fleet/broker.py) all along.
A run passes only if, besides heap.py's own checks, the table's last
health message says the telemetry lost nothing: no payload dropped, no
socket lost (a MemoryError in the telemetry counts as one or the other).

    .venv/bin/python -m host_tools.bench.telemetry_heap [cycle hand service]

Prints one JSON object: each figure, in bytes (256 B bisection)."""

import json
import os
import sys

from host_tools.bench import heap, simrun
from host_tools.fleet.broker import Broker, table_user
from host_tools.fleet.listen import Listener
from host_tools.sim.launcher import SimTable

SITE, TABLE, PASSWORD = "bench", "t1", "bench-pw"


def _with_telemetry(broker):
    class TelemetryTable(SimTable):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            with open(os.path.join(self.store, "mqtt.json"), "w") as f:
                json.dump({"host": "127.0.0.1", "port": broker.port, "site": SITE,
                           "table": TABLE, "user": table_user(SITE, TABLE),
                           "password": PASSWORD}, f)
    return TelemetryTable


def _checked(fn, broker):
    """fn(heap) with a subscriber: True only if fn passes and the table's
    last health says nothing was dropped or lost."""
    def run(h):
        with Listener(broker.port, broker.dashboard) as ln:
            ok = fn(h)
            healths = [m.data for m in ln.seen if m.leaf == "health" and m.data]
        if not ok or not healths:
            return False
        mq = healths[-1]["mqtt"]
        return mq["dropped"] == 0 and mq["errors"] == 0
    return run


def main(argv):
    which = argv or ["cycle", "hand", "resume", "service"]
    fns = {"cycle": heap.cycle_ok, "hand": heap.hand_ok, "resume": heap.resume_ok,
           "service": heap.service_ok}
    out = {}
    with Broker(tables=[(SITE, TABLE, PASSWORD)]) as broker:
        simrun.SimTable = _with_telemetry(broker)
        runs = []
        for name in which:
            out["telemetry_heap_%s_bytes" % name] = heap.smallest(
                _checked(fns[name], broker), heap.IMAGE_RANGE, runs)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
