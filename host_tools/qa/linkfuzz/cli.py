"""Fuzzing the link: mutated, truncated, oversized and
random frames, counted, in process and on the live link.

    python -m host_tools.qa.linkfuzz [--frames N] [--seed S] [--json]

The command line: the in-process fuzz (server_fuzz.py), its summary
printed, or its JSON.
"""

import argparse
import json

from host_tools.qa.linkfuzz.server_fuzz import inprocess


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.qa.linkfuzz",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    log = None if args.json else (lambda s: print(s, flush=True))
    out = inprocess(args.frames, args.seed, log=log)
    if args.json:
        print(json.dumps(out))
    else:
        print("linkfuzz: %(frames)d frames (%(bytes)d bytes) in %(bursts)d bursts; "
              "%(good_frames)d good frames, link %(link)s; the valid request answered "
              "%(valid_answered)d times; %(wall_s)s s" % out)
        for f in out["failures"][:5]:
            print("failure: %s" % f["problems"])
        print("PASS" if out["ok"] else "FAIL")
    return 0 if out["ok"] else 1
