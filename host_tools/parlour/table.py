"""One table of `make fleet`: the real firmware on the twin (SimTable), its
telemetry configured for the fleet's broker, virtual players at a
parlour's pace (Parlour), random faults and the technician who repairs
them (the soak's Injector, host_tools/qa/soak/injector.py), started and cleared as
the live view does (host_tools/view/tableview/demo.py's Demo).

    python -m host_tools.parlour.table --conf JSON|- [--seconds S]

JSON: {"host", "port", "site", "table", "user", "password", "seed",
"speed", "fault_rate", "fix_after"} ('-': the first line of stdin, so
that no password shows in the process list). speed: virtual seconds per wall
second (0: as fast as the processes go). Lines on stdin drive it:
`fault NAME[:ARG]` injects a fault now (the virtual table's), `quit` (or
the end of stdin: the fleet is gone) stops it. Lines of JSON on stdout:
    {"ev": "ready"}                      the firmware answers on its link
    {"ev": "fault", "code", "t", "wall"} the firmware's fault event; wall:
                                         time.monotonic() when it came
    {"ev": "reached", "t"}               --seconds: the table's clock is
                                         there; it stays there until quit
Ctrl-C is the fleet's to handle: this process ignores SIGINT and stops
when its fleet tells it, or when its stdin closes.
"""

import argparse
import json
import random
import signal
import sys
import threading
import time

from firmware.link.codec import LinkError
from host_tools.link.client import LinkClient
from host_tools.qa.soak.injector import Injector
from host_tools.sim.launcher import SimTable
from host_tools.view.tableview.demo import Demo, ViewState, seat_players

HOLD_MS = 500             # --seconds: the clock stops this far past S (what is queued goes out)


class FleetDemo(Demo):
    """The live view's host side, with the soak's Injector as the
    technician: the repair happens in the table's own thread, and the
    Injector knows its fault is repaired (it plans the next one)."""

    def __init__(self, sim, link, view, fix_after_s, injector, say):
        Demo.__init__(self, sim, link, view, fix_after_s)
        self.injector = injector
        self.say = say

    def on_event(self, ev):
        if ev["ev"] == "fault":
            self.say({"ev": "fault", "code": ev["code"], "t": ev.get("t"),
                      "wall": time.monotonic()})
        Demo.on_event(self, ev)

    def _fix(self, now):
        v = self.view
        v.fix_at = None
        self.injector.repair(v.fault["name"] if v.fault else None)
        if not self.injector.repaired.wait(30):
            v.fix_at = self.table.now + 1000
            return
        try:
            self.link.request("clear")
        except LinkError:
            v.fix_at = self.table.now + 1000      # not clearable yet: again in a second


class Hold:
    """--seconds: the table's clock stops at S + HOLD_MS (the bus thread
    waits in advance_to, so the firmware waits for its next NOW): its
    connection stays open and its last state stays what the broker has."""

    def __init__(self, table, until_ms, say):
        self.table = table
        self.until = until_ms
        self.say = say
        self.release = threading.Event()
        self._orig = table.advance_to
        table.advance_to = self._advance_to

    def _advance_to(self, t):
        if t > self.until and not self.release.is_set():
            out = self._orig(self.until)
            self.say({"ev": "reached", "t": self.table.now})
            self.release.wait()
            return out + self._orig(t)
        return self._orig(t)


def run(conf, seconds=None, stdin=sys.stdin, stdout=sys.stdout):
    lock = threading.Lock()

    def say(obj):
        with lock:
            stdout.write(json.dumps(obj) + "\n")
            stdout.flush()

    speed = conf.get("speed", 1.0)
    sim = SimTable(seed=conf["seed"], realtime=speed > 0, speed=speed or 1.0)
    mq = {k: conf[k] for k in ("host", "port", "site", "table", "user", "password")}
    with open(sim.store + "/mqtt.json", "w") as f:
        json.dump(mq, f)
    seat_players(sim.table, conf["seed"])
    injector = Injector(sim.table, random.Random("fleet:%s" % conf["seed"]), conf.get("fault_rate", 0.0))
    hold = Hold(sim.table, int(seconds * 1000) + HOLD_MS, say) if seconds is not None else None
    stop = threading.Event()

    def commands():
        for line in stdin:
            words = line.split()
            if words[:1] == ["fault"] and len(words) == 2:
                injector.planned = (sim.table.now, words[1])     # fired at the table's next step
            elif words[:1] == ["quit"]:
                break
        stop.set()
        if hold is not None:
            hold.release.set()
    threading.Thread(target=commands, name="fleet-commands", daemon=True).start()
    with sim:
        with LinkClient(sim.link_path) as link:
            view = ViewState(conf["seed"], speed, sim.code)
            demo = FleetDemo(sim, link, view, conf.get("fix_after", 20.0), injector, say)
            demo.begin()
            say({"ev": "ready"})
            while not stop.is_set():
                ev = link.next_event(timeout=0.05)
                while ev is not None:
                    demo.on_event(ev)
                    ev = link.next_event(timeout=0)
                demo.tick()
                if not sim.alive:
                    say({"ev": "stopped", "reason": sim.exit_reason,
                         "log": sim.firmware_log()[-2000:]})
                    return 1
            if hold is not None:
                hold.release.set()
    return 0


def main(argv=None):
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the fleet stops its tables
    # A SIGTERM to the whole group (`timeout`, a service manager): stop
    # as on `quit`, the firmware killed by SimTable.stop on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ap = argparse.ArgumentParser(prog="python -m host_tools.parlour.table",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--conf", required=True,
                    help="the table's settings, JSON; '-': stdin's first line")
    ap.add_argument("--seconds", type=float, default=None,
                    help="stop the table's clock at S virtual seconds")
    args = ap.parse_args(argv)
    try:
        conf = json.loads(sys.stdin.readline() if args.conf == "-" else args.conf)
        return run(conf, args.seconds)
    except LinkError as e:
        print(json.dumps({"ev": "stopped", "reason": str(e)}), flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
