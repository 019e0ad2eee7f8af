"""`make bench`'s command line: run the groups, print the table, write
bench.json (see the package's docstring)."""

import argparse
import json
import platform
import sys
import time
import traceback

from host_tools.bench import targets as tg
from host_tools.image.mpenv import ROOT


def _run_replay(args):
    from host_tools.bench import replay
    return replay.measure(args.source, args.runs_cpython, args.runs_micropython)


def _run_cycle(args):
    from host_tools.bench import cycle
    return cycle.measure_cycles()


def _run_hands(args):
    from host_tools.bench import cycle
    return cycle.measure_between_hands()


def _run_heap(args):
    from host_tools.bench import heap, telemetry_heap
    figures, details = heap.measure()
    figures.update(telemetry_heap.measure(details["runs"]))
    return figures, details


def _run_frag(args):
    from host_tools.bench import fragmentation
    return fragmentation.measure()


def _run_alloc(args):
    from host_tools.bench import alloc
    return alloc.measure(args.source)


def _run_link(args):
    from host_tools.bench import link
    return link.measure()


def _run_size(args):
    from host_tools.bench import sizes
    return sizes.measure()


def _run_dice(args):
    from host_tools.bench import dice
    return dice.measure(source=args.source)


def _run_esp32(args):
    from host_tools.bench import esp32
    return esp32.measure()


# Run order: the quick and the timing-sensitive first, the heap search last.
RUNNERS = (("size", _run_size), ("dice", _run_dice), ("alloc", _run_alloc),
           ("replay", _run_replay), ("cycle", _run_cycle), ("hands", _run_hands),
           ("link", _run_link), ("heap", _run_heap), ("frag", _run_frag),
           ("esp32", _run_esp32))


def run_groups(names, args, log=print):
    """{group: {"figures", "details", "error", "runtime_s"}} for `names`."""
    out = {}
    for name, fn in RUNNERS:
        if name not in names:
            continue
        t0 = time.perf_counter()
        rec = {"figures": {}, "details": {}, "error": None}
        try:
            rec["figures"], rec["details"] = fn(args)
        except Exception as e:             # one group's failure is reported, the rest go on
            rec["error"] = "%s: %s" % (type(e).__name__, e)
            rec["figures"] = getattr(e, "figures", {}) or {}
            rec["details"] = getattr(e, "details", {}) or {}
            rec["details"]["traceback"] = traceback.format_exc().splitlines()[-6:]
            log("bench %s: %s" % (name, rec["error"]), file=sys.stderr)
        rec["runtime_s"] = round(time.perf_counter() - t0, 2)
        out[name] = rec
    return out


def notes(groups):
    """One or two lines per group that say how a figure came about."""
    lines = []
    d = {k: g["details"] for k, g in groups.items() if not g["error"]}
    if "cycle" in d:
        c = d["cycle"]["cycles"]
        lines.append("cycle: seeds %s: overhead %s; speedup %s"
                     % (",".join(str(r["seed"]) for r in c),
                        " ".join("%+.1f%%" % (100 * r["overhead"]) for r in c),
                        " ".join("%.0fx" % r["speedup"] for r in c)))
    if "hands" in d:
        h = d["hands"]
        for w in h["waits"]:
            lines.append("hands: hand end at %.2f s -> dice %.2f s later = lift %.2f + dealer's"
                         " key %.2f + roll %.2f" % (w["hand_end_t_ms"] / 1000.0, w["wait_s"],
                                                     w["lift_s"], w["dealer_key_s"], w["roll_s"]))
        m = h["model_ms"]
        lines.append("hands: lift + dice = up %.2f + roll %.2f s (the model's travel and the"
                     " config's roll; the platforms' %.2f s down is during the hand; the"
                     " dealer's reaction, %.2f s, is in the 0.5 s margin)"
                     % (m["up_ms"] / 1000.0, m["dice_roll_ms"] / 1000.0, m["down_ms"] / 1000.0,
                        m["reaction_ms"] / 1000.0))
    if "heap" in d:
        h = d["heap"]
        lines.append("heap: %s; runs %s (bisected to %d B)" % (h["port"], ", ".join(
            "%s %d" % (k, len(v)) for k, v in sorted(h["runs"].items())), h["resolution"]))
    f = groups.get("frag", {}).get("details")
    if f and f.get("soak"):
        lines.append("frag: %s hands in a %d B heap, %d heap reports: the largest free block"
                     " %s to %s B, the least free %s B; %d service visits; %s s"
                     % (f["soak"]["hands"], f["heap"], f["samples"], f["max_free_min"],
                        f["max_free_max"], f["free_min"], len(f["visits"]), f["wall_s"]))
    if "alloc" in d:
        a = d["alloc"]
        lines.append("alloc: " + "; ".join(
            "%s %d/%d ticks under heap_lock, %d B" % (k, p["ticks_under_heap_lock"], p["ticks"],
                                                      p["bytes"])
            for k, p in sorted(a["phases"].items()))
            + "; a published hand event %d B" % a["hand_event"]["bytes"])
    if "link" in d:
        p = d["link"]["pipelined"]
        lines.append("link: %d hosts at once: %.0f req/s, while the controller ticked %d times"
                     " in %.0f ms (virtual %d ms)" % (p["threads"], p["requests_per_s"],
                                                     p["ticks"], p["wall_ms"], p["virtual_ms"]))
        cpu = d["link"]["clocks"].get("cpu_ms")
        if cpu is not None:
            lines.append("link: the firmware's CPU time %.3f ms a status, one host, its ticks"
                         " included (less moved by the machine's load than the round trip)" % cpu)
    if "size" in d:
        s = d["size"]
        lines.append("size: %d .mpy files: %s" % (s["files"], ", ".join(
            "%s %d B" % kv for kv in sorted(s["per_package_bytes"].items()))))
    if "dice" in d:
        s = d["dice"]
        lines.append("dice: %d rolls, faces %s, chi-square %.2f (5 dof)"
                     % (s["rolls"], s["faces"], s["chi2"]))
    if "replay" in d:
        lines.extend(d["replay"].get("notes", []))
    return lines


def table(figures, tgts, verdicts, ran):
    rows = ["%-42s %20s %12s" % ("", "measured", "target")]
    for key, group, label, unit, _op, _t in tg.FIGURES:
        if group not in ran:
            continue
        rows.append("%-42s %20s %12s   %s" % (label, tg.fmt(figures.get(key), unit),
                                              tg.fmt_target(tgts.get(key), unit), verdicts[key]))
    return rows


def main(argv=None, description=None):
    """`python -m host_tools.bench`; description: the package's first line."""
    ap = _parser(description)
    args = ap.parse_args(argv)
    names = _chosen_groups(ap, args)
    t0 = time.perf_counter()
    groups = run_groups(names, args)
    total_s = time.perf_counter() - t0
    judged = _judged(groups)
    _print_summary(judged, groups, total_s, gantt=not args.no_gantt)
    _write_report(judged, groups, total_s)
    return 1 if judged["failed"] else 0


def _parser(description):
    ap = argparse.ArgumentParser(prog="python -m host_tools.bench", description=description)
    ap.add_argument("--only", metavar="GROUP[,GROUP]",
                    help="run only these groups: %s" % ",".join(tg.GROUPS))
    ap.add_argument("--source", action="store_true",
                    help="run MicroPython on the .py sources even if build/mpy is there")
    ap.add_argument("--runs-cpython", type=int, default=0,
                    help="replay runs per hand (default 200)")
    ap.add_argument("--runs-micropython", type=int, default=0,
                    help="replay runs per hand (default 50)")
    ap.add_argument("--no-gantt", action="store_true", help="do not print the cycle's timeline")
    return ap


def _chosen_groups(ap, args):
    """The groups to run: every one (esp32 only with the kit), or --only's."""
    names = tg.GROUPS
    from host_tools.image import espkit
    if not espkit.available():     # the esp32 port's figures need QEMU, from the kit
        names = tuple(n for n in names if n != "esp32")
        print("no ESP32-S3 kit in %s: the esp32 group is left out" % espkit.DEFAULT_VENDOR)
    if args.only:
        names = tuple(n.strip() for n in args.only.split(","))
        bad = [n for n in names if n not in tg.GROUPS]
        if bad:
            ap.error("unknown group %s (groups: %s)" % (",".join(bad), ",".join(tg.GROUPS)))
    return names


def _judged(groups):
    """The figures of the groups that ran against their targets: the
    report's first keys (figures, targets, verdicts, over, failed)."""
    figures = {}
    for key, group, *_ in tg.FIGURES:
        if group in groups:
            figures[key] = groups[group]["figures"].get(key)
    tgts = tg.targets(figures)
    verdicts = {key: tg.verdict(figures[key], tgts.get(key)) for key in figures}
    return {"figures": figures, "targets": tgts, "verdicts": verdicts,
            "over": [k for k, v in verdicts.items() if v == "OVER"],
            "failed": sorted(k for k, g in groups.items() if g["error"])}


def _print_summary(judged, groups, total_s, gantt):
    """The table, the notes, the cycle's timeline (`gantt`), the run times
    and what went over or failed."""
    print("make bench: %s; %s %s" % (time.strftime("%Y-%m-%d %H:%M"), platform.system(),
                                     platform.machine()))
    print()
    for row in table(judged["figures"], judged["targets"], judged["verdicts"], groups):
        print(row)
    print()
    for line in notes(groups):
        print(line)
    timeline = groups.get("cycle", {}).get("details", {}).get("timeline")
    if timeline and gantt:
        print()
        print("one cycle (seed %d), virtual time:" % timeline["seed"])
        print(timeline["gantt"])
    print()
    print("runtime: %s; total %.1f s" % (", ".join(
        "%s %.1f s" % (k, g["runtime_s"]) for k, g in groups.items()), total_s))
    if judged["over"]:
        print("OVER TARGET: %s" % ", ".join(judged["over"]))
    if judged["failed"]:
        print("FAILED: %s" % "; ".join("%s (%s)" % (k, groups[k]["error"])
                                       for k in judged["failed"]))


def _write_report(judged, groups, total_s):
    report = dict(judged, **{
        "groups": {k: {"runtime_s": g["runtime_s"], "error": g["error"], "details": g["details"]}
                   for k, g in groups.items()},
        "runtime_s": round(total_s, 1),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "host": {"system": platform.system(), "machine": platform.machine(),
                 "python": platform.python_version()},
    })
    with open(ROOT / "bench.json", "w") as f:
        json.dump(report, f, indent=2, default=_json_default)
        f.write("\n")
    print("wrote bench.json")


def _json_default(o):
    if isinstance(o, (set, tuple)):
        return list(o)
    return str(o)
