"""`make fleet`: the broker, TABLES virtual tables and the parlour page,
until Ctrl-C (docs/fleet.md).

    python -m host_tools.fleet [--tables N] [--speed X] [--fault-rate R]
                               [--fix-after S] [--http-port P] [--seed S]
                               [--store FILE]

Prints the page's URL, then a line for each fault and each table that
stops. Lines on stdin act on one table (the browser test's, and anyone's):
    t3 fault lane_jam:1    a fault injected into t3's virtual table
    t3 pause, t3 resume    its process stopped (SIGSTOP) and continued: a
                           table silent with its connection open
    t3 kill                its process killed: its firmware ends with it,
                           the connection closes without a goodbye
"""

import argparse
import signal
import sqlite3
import sys
import threading
import time

from host_tools.fleet.fleet import STORE, Fleet, FleetError
from host_tools.fleet.broker import BrokerError
from host_tools.fleet.model import STALE_S
from host_tools.texts import faults as fault_table

SPEED = 2.0          # the tables' pace: health every 5 s of wall time (docs/fleet.md)
HTTP_PORT = 8019


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.fleet", description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=12)
    ap.add_argument("--speed", type=float, default=SPEED,
                    help="virtual seconds per wall second, each table's own clock (default %g)" % SPEED)
    ap.add_argument("--fault-rate", type=float, default=0.2,
                    help="chance of a random fault at each new set of walls (default 0.2)")
    ap.add_argument("--fix-after", type=float, default=30.0, metavar="S",
                    help="virtual seconds before the technician repairs a fault (default 30)")
    ap.add_argument("--http-port", type=int, default=HTTP_PORT,
                    help="the page's port on 127.0.0.1 (default %d; another when taken)" % HTTP_PORT)
    ap.add_argument("--stale", type=float, default=STALE_S, metavar="S",
                    help="seconds without a message before a table shows offline (default %g)"
                    % STALE_S)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", default=str(STORE), metavar="FILE",
                    help="the day's figures, kept across runs (default build/fleet/days.sqlite)")
    args = ap.parse_args(argv)
    if not 1 <= args.tables <= 200:
        ap.error("--tables must be between 1 and 200")
    if not args.speed > 0:
        ap.error("--speed must be > 0")
    # A flag, not an Event: a second signal inside Event.set would wait
    # on the lock the first holds.
    stopping = []
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: stopping.append(1))

    def log(line):
        print(time.strftime("%H:%M:%S ") + line, flush=True)
    fleet = Fleet(tables=args.tables, speed=args.speed, fault_rate=args.fault_rate,
                  fix_after=args.fix_after, seed=args.seed, http_port=args.http_port,
                  stale_s=args.stale, log=log, store=args.store)
    try:
        fleet.start()
    except (BrokerError, FleetError, OSError, sqlite3.Error) as e:
        fleet.stop()
        print("fleet: %s" % e, file=sys.stderr)
        return 2
    try:
        fleet.write_connection()
        log("broker on 127.0.0.1:%d; %d tables at %gx (site %s: %s)" % (
            fleet.broker.port, args.tables, args.speed, fleet.site, " ".join(fleet.ids)))
        log("the parlour page: %s" % fleet.page.url)
        log("mjctl fleet shows it in this terminal too; Ctrl-C stops everything")
        threading.Thread(target=_commands, args=(fleet, log), daemon=True).start()
        while not stopping:
            try:
                tid, ev = fleet.events.get(timeout=0.2)
            except Exception:
                continue
            if ev.get("ev") == "fault":
                log("%s: fault %d %s" % (tid, ev["code"], fault_table.name_of(ev["code"])))
            elif ev.get("ev") in ("stopped", "exit") and not stopping:
                log("%s stopped: %s" % (tid, ev.get("reason") or fleet.stopped.get(tid)))
    finally:
        log("stopping the tables, the page and the broker")
        fleet.stop()
    return 0


def _commands(fleet, log):
    signals = {"pause": signal.SIGSTOP, "resume": signal.SIGCONT, "kill": signal.SIGKILL}
    for line in sys.stdin:
        words = line.split()
        if len(words) == 3 and words[1] == "fault" and words[0] in fleet.procs:
            fleet.inject(words[0], words[2])
            log("%s: %s injected" % (words[0], words[2]))
        elif len(words) == 2 and words[1] in signals and words[0] in fleet.procs:
            fleet.procs[words[0]].send_signal(signals[words[1]])
            log("%s: %s" % (words[0], words[1]))
        elif words:
            log("not understood: %r (say: t3 fault lane_jam:1, t3 pause, t3 resume, t3 kill)"
                % line.strip())


if __name__ == "__main__":
    sys.exit(main())
