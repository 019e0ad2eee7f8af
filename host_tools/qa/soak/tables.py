"""The soak on several tables at once: each table in its own process
(`python -m host_tools.qa.soak --tables 1 --json`), the in-process link
fuzz beside them, and the tables' summaries summed."""

import json
import subprocess
import sys
import time

from host_tools.image.mpenv import ROOT
from host_tools.qa import linkfuzz
from host_tools.qa.soak.one_table import soak


def soak_tables(hands, tables, seed=1, fault_rate=0.1, log=None, fuzz_frames=0,
                live_burst=50, pace="brisk", max_wall=None):
    """`hands` shared out over `tables` independent tables played at once,
    one process each (`python -m host_tools.qa.soak --tables 1 --json`, seeds
    seed, seed+1, ...), each checked in full by its own `soak`; the fuzz in
    process runs here meanwhile. The summary: every table's (`tables`) and
    the totals; "ok" only when every table passed and the hands add up."""
    if tables == 1:
        out = soak(hands, seed, fault_rate, log, fuzz_frames, live_burst, pace, max_wall)
        return sum_tables(hands, [out], out["wall_s"], out["link_fuzz"].get("inprocess"))
    t0 = time.monotonic()
    share = [hands // tables + (k < hands % tables) for k in range(tables)]
    procs = []
    for k, n in enumerate(share):
        cmd = [sys.executable, "-m", "host_tools.qa.soak", "--tables", "1", "--hands", str(n),
               "--seed", str(seed + k), "--fault-rate", repr(fault_rate), "--pace", pace,
               "--live-burst", str(live_burst), "--fuzz-frames", "0", "--json"]
        if max_wall is not None:
            cmd += ["--max-wall", repr(max_wall - (time.monotonic() - t0))]
        if log:
            cmd.append("--progress")       # its progress lines on stderr, as they come
        procs.append(subprocess.Popen(cmd, cwd=str(ROOT), stdout=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, text=True))
    inprocess = None
    try:
        if fuzz_frames:
            if log:
                log("link fuzz: %d frames in process, beside the tables" % fuzz_frames)
            inprocess = linkfuzz.inprocess(fuzz_frames, seed)
            inprocess["failures"] = inprocess["failures"][:3]
        outs = []
        for k, proc in enumerate(procs):
            text, _ = proc.communicate()
            try:
                outs.append(json.loads(text.strip().splitlines()[-1]))
            except (ValueError, IndexError):
                # A table whose process died without its summary: it failed.
                outs.append({"seed": seed + k, "ok": False, "checks_ok": False, "hands": 0,
                             "crashed": "exit %s, output %r" % (proc.returncode, text[-500:])})
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return sum_tables(hands, outs, round(time.monotonic() - t0, 1), inprocess)


def sum_tables(hands, outs, wall_s, inprocess):
    """The tables' summaries summed: figures that add up are added, the
    counters and the table's counts compared table by table (a sum could
    hide a difference in each), ok only when each table is."""
    whole = [o for o in outs if "crashed" not in o]

    def total(key):
        return sum(o[key] for o in whole)
    out = {"hands": total("hands"), "tables": outs, "seeds": [o["seed"] for o in outs],
           "results": {r: sum(o["results"][r] for o in whole) for r in ("win", "draw")},
           "wall_s": wall_s, "virtual_s": round(sum(o["virtual_s"] for o in whole), 1)}
    for key in ("faults", "injected", "mismatches", "stuck", "firmware_errors", "restarts"):
        out[key] = total(key)
    out["landed"] = {k: sum(o["landed"][k] for o in whole) for k in whole[0]["landed"]} if whole else {}
    for key in ("fault_kinds", "injected_kinds"):     # by name: reported, injected
        out[key] = {}
        for o in whole:
            for k, n in o.get(key, {}).items():
                out[key][k] = out[key].get(k, 0) + n
    out["traceback"] = any(o["traceback"] for o in whole)
    out["counters_equal"] = bool(whole) and all(o["counters_equal"] for o in whole)
    out["counters"] = {"lifts": sum(o["counters"]["lifts"] for o in whole),
                       "hands": sum(o["counters"]["hands"] for o in whole),
                       "tiles_fed": [sum(o["counters"]["tiles_fed"][n] for o in whole)
                                     for n in range(4)]}
    out["table_counts"] = {"lifts": sum(o["table_counts"]["lifts"] for o in whole),
                           "tiles_fed": [sum(o["table_counts"]["tiles_fed"][n] for o in whole)
                                         for n in range(4)],
                           "tipped": [sum(o["table_counts"]["tipped"][n] for o in whole)
                                      for n in range(4)]}
    live = {k: sum(o["link_fuzz"]["live"][k] for o in whole)
            for k in ("frames", "bursts", "answered", "garbage", "bad_crc", "errors")}
    live["failures"] = [f for o in whole for f in o["link_fuzz"]["live"]["failures"]][:3]
    live["ok"] = bool(whole) and all(o["link_fuzz"]["live"]["ok"] for o in whole)
    out["link_fuzz"] = {"live": live, "frames": live["frames"]}
    if inprocess is not None:
        out["link_fuzz"]["inprocess"] = inprocess
        out["link_fuzz"]["frames"] += inprocess["frames"]
    out["asked"] = hands
    out["complete"] = out["hands"] == hands and all(o["complete"] for o in whole)
    out["checks_ok"] = (len(whole) == len(outs) and all(o["checks_ok"] for o in outs)
                        and (inprocess is None or inprocess["ok"]))
    out["ok"] = out["checks_ok"] and out["complete"]
    return out
