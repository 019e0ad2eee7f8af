"""`make soak`: hand after hand on the virtual table, with faults.

    python -m host_tools.qa.soak [--hands N] [--seed S] [--tables T] [--fault-rate R]
                              [--pace brisk|parlour] [--fuzz-frames N]
                              [--live-burst N] [--json]

The command line: one table's own summary (`--tables 1 --json`, what
`--tables T` reads from each table's process), or the tables' totals,
printed or as JSON; exit 0 when the soak passes, 1 when not.
"""

import argparse
import json
import sys

from host_tools.qa.soak.one_table import soak
from host_tools.qa.soak.players import PACES
from host_tools.qa.soak.tables import soak_tables


def _parser():
    ap = argparse.ArgumentParser(prog="python -m host_tools.qa.soak", description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tables", type=int, default=1, metavar="T",
                    help="independent tables played at once, seeds S, S+1, ... (default 1)")
    ap.add_argument("--fault-rate", type=float, default=0.1, metavar="R",
                    help="chance of a fault at each new set of walls (default 0.1)")
    ap.add_argument("--pace", choices=sorted(PACES), default="brisk",
                    help="the players' pace: brisk (the soak's, default) or parlour (make run's)")
    ap.add_argument("--fuzz-frames", type=int, default=1000000, metavar="N",
                    help="frames fuzzed in process (the link server; default 1,000,000)")
    ap.add_argument("--live-burst", type=int, default=50, metavar="N",
                    help="fuzzed frames on the live link after each hand (default 50)")
    ap.add_argument("--max-wall", type=float, default=None, metavar="S",
                    help="wait for no new hand after S wall seconds: the end's checks run "
                         "on the hands played, and the verdict says how many of --hands")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--progress", action="store_true",
                    help="with --json: progress lines on stderr (what --tables gives its tables)")
    return ap


def main(argv=None):
    ap = _parser()
    args = ap.parse_args(argv)
    if args.tables < 1 or args.hands < args.tables:
        ap.error("--tables must be between 1 and --hands")
    if args.json:
        log = (lambda s: print("table %d: %s" % (args.seed, s), file=sys.stderr, flush=True)
               ) if args.progress else None
    else:
        log = lambda s: print(s, flush=True)  # noqa: E731
    if args.json and args.tables == 1:
        # One table's own summary (what --tables reads).
        out = soak(args.hands, args.seed, args.fault_rate, log, args.fuzz_frames,
                   args.live_burst, args.pace, args.max_wall)
        print(json.dumps(out))
        return 0 if out["ok"] else 1
    out = soak_tables(args.hands, args.tables, args.seed, args.fault_rate, log,
                      args.fuzz_frames, args.live_burst, args.pace, args.max_wall)
    if args.json:
        print(json.dumps(out))
    else:
        _print_summary(out)
    return 0 if out["ok"] else 1


def _print_summary(out):
    for o in out["tables"]:
        if "crashed" in o:
            print("table %(seed)d: crashed (%(crashed)s)" % o)
            continue
        print("table %d: %s" % (o["seed"], _line(o)))
    print("%s: %s" % ("total" if len(out["tables"]) > 1 else "soak", _line(out)))
    lf = out["link_fuzz"]
    print("link fuzz: %d frames: live %d in %d bursts (%d answered, garbage %d bytes, "
          "bad CRC %d, errors %d, failures %s)%s" % (
              lf["frames"], lf["live"]["frames"], lf["live"]["bursts"],
              lf["live"]["answered"], lf["live"]["garbage"], lf["live"]["bad_crc"],
              lf["live"]["errors"], lf["live"]["failures"][:3],
              "; in process %(frames)d (%(bursts)d bursts, valid answered %(valid_answered)d, "
              "link %(link)s, %(wall_s)s s, failures %(failures)s)" % lf["inprocess"]
              if "inprocess" in lf else ""))
    for o in out["tables"]:
        if o.get("stuck"):
            print("table %d stuck: %s\nlast events: %s" % (
                o["seed"], o.get("stuck_status"), o.get("stuck_events")))
    print("PASS" if out["ok"] else "INCOMPLETE: every check passed on %d of the %d hands "
          "asked (--max-wall)" % (out["hands"], out["asked"]) if out["checks_ok"]
          else "FAIL")


def _line(o):
    """One table's figures, or the totals', on one line."""
    return ("%(hands)d hands (%(results)s), %(faults)d faults %(fault_kinds)s (%(injected)d "
            "injected %(injected_kinds)s, landed %(landed)s), %(mismatches)d mismatches, %(stuck)d stuck, "
            "%(firmware_errors)d firmware errors, %(restarts)d restarts; counters %(counters)s, "
            "the table's %(table_counts)s, equal: %(counters_equal)s; "
            "%(virtual_s)s s virtual in %(wall_s)s s" % o)
