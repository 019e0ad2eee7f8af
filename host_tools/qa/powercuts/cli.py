"""`make powercuts`: the power cut at random instants of cycles and hands.

    python -m host_tools.qa.powercuts [--cuts N] [--seed S] [--json]

The command line: the cuts (run.py), their summary printed, or its JSON;
exit 0 when every check passed.
"""

import argparse
import json

from host_tools.qa.powercuts.run import SHARE_WALL, powercuts


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.qa.powercuts",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--cuts", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--wall-share", type=float, default=SHARE_WALL, metavar="P",
                    help="of the cuts in play, the share at a wall-clock instant (the "
                         "firmware killed wherever it is, a save included; default 0)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    log = None if args.json else (lambda s: print(s, flush=True))
    out = powercuts(args.cuts, args.seed, log, share_wall=args.wall_share)
    if args.json:
        print(json.dumps(out))
    else:
        _print_summary(out)
    return 0 if out["ok"] else 1


def _print_summary(out):
    print("powercuts: %(cuts)d cuts (%(wall_cuts)d at a wall-clock instant) by state "
          "%(by_state)s (%(in_hand)d in a hand); "
          "%(power_lost)d power_lost, %(no_power_lost)d boots without it; "
          "%(moved_before_command)d moved before a command; "
          "%(new_file_left)d .new left by a cut; %(in_flight)d counts in flight; "
          "counters asked again %(asked_again)d times; "
          "hand cuts %(hand_cuts)d: %(resumed)d resumed in play, %(dice_again)d to the "
          "dealer's key again, fallbacks %(fallbacks)s; cycles resumed on clear "
          "%(cycles_resumed)s (lanes emptied alone %(lanes_emptied)d; lifts that then fell "
          "back %(lift_fallbacks)s), cycles tipped %(cycles_tipped)d; "
          "%(replay_checked)d resumed hands "
          "checked against their replay (%(replay_after_clear)d after a resumed cycle; "
          "%(replay_states)d states, %(replay_mismatches)d "
          "differing); dealer kept %(dealer_kept)d; "
          "other faults %(other_faults)s; counters %(counters)s; "
          "%(virtual_s)s s virtual in %(wall_s)s s" % out)
    for f in out["failures"][:20]:
        print("failure: %s" % f)
    print("PASS" if out["ok"] else "FAIL (%d failures)" % len(out["failures"]))
