"""image_soak_min_free_block_bytes: the heap's fragmentation over a soak.

    python -m host_tools.bench.fragmentation [--hands N] [--seed S] [--json] [--telemetry]

HANDS hands of the soak (host_tools/qa/soak/: brisk players, faults injected
at FAULT_RATE and repaired, the live link fuzzed after every hand) on one
table whose firmware, frozen in the twin, runs in a HEAP-byte heap, with a
technician's visit (heap.py `service_visit`: the self-test, an RFID scan and
audit, a config change) where a service session is allowed: at idle before
the first `start`, and again at the first fault that stops the table
outside a hand, once repaired and before `clear`. With two tile sets the
table never idles between hands, and it builds the next set during a hand,
so nearly every fault stops a hand (every one, seeds 1 to 3): no visit
then, since the virtual players play on through a stop, and a mid-hand stop
of a few seconds makes the hand differ from its replay, visit or none.

After every hand's result, and after each visit, the table asks for a heap
report (the sim bus's HEAP frame: a collection, then the GC's own figures
in the firmware's log, host_tools/sim/heaplog.py). The figure is the
smallest largest-free-block over every report: the largest allocation the
heap could still serve at its most fragmented moment seen. Each report
follows a collection because the GC collects before it fails an
allocation: what it can serve is what is left once the garbage is gone.

With --telemetry the table publishes to a real broker all along
(telemetry_heap.py: Debian's mosquitto, `make broker`), stepping aside for
each visit.

The measurement fails (FragmentationFailed, carrying the figures and
details) when the firmware printed a MemoryError, dropped an event or an
answer (no heap for it), the soak's own checks did not pass, a visit
failed, or a report did not come.
"""

import contextlib
import time

from host_tools.bench import targets as tg
from host_tools.bench.heap import service_visit
from host_tools.link.client import LinkError
from host_tools.qa.soak import soak
from host_tools.sim import heaplog

HANDS = 50
SEED = 1
HEAP = 64 * 1024            # the ESP32-S3 port's first heap area
FAULT_RATE = 0.3
LIVE_BURST = 50                # the soak's own fuzz of the live link after each hand
REPORT_S = 10.0                # wall seconds a heap report may take
KEEP = 5                       # samples kept from each end of the run in the details


class FragmentationFailed(RuntimeError):
    """The run did not measure what it should: `figures` and `details` say
    what it saw (the bench keeps them beside the error)."""

    def __init__(self, why, figures, details):
        RuntimeError.__init__(self, why)
        self.figures = figures
        self.details = details


class Reports:
    """The soak's instruments (soak() `hooks`): the heap reports, and the
    technician's visits."""

    def __init__(self):
        self.samples = []          # (when, (used, free, max_free_bytes))
        self.missed = []           # reports that did not come
        self.visits = []           # {"when", "ok", "wall_s", "error"}
        self.hands = 0
        self.repairs = []          # (fault, the state it stopped)
        self.memory_errors = []    # faults a MemoryError raised (firmware_error)
        self.log = ""              # the firmware's log at the last report or fault

    def sample(self, sim, when):
        try:
            self.samples.append((when, heaplog.report(sim, timeout=REPORT_S)))
        except TimeoutError as e:
            self.missed.append("%s: %s" % (when, e))
        self.log = sim.firmware_log()

    def visit(self, sim, link, when):
        t0 = time.monotonic()
        try:
            ok, error = service_visit(sim, link), None
        except LinkError as e:     # refused, or no answer: the visit failed, the soak goes on
            ok, error = False, str(e)
        self.visits.append({"when": when, "ok": ok, "wall_s": round(time.monotonic() - t0, 2),
                            "error": error})
        self.sample(sim, "visit " + when)

    def ready(self, sim, link):
        self.sample(sim, "boot")
        self.visit(sim, link, "before the first start")

    def hand_over(self, sim, link):
        self.hands += 1
        self.sample(sim, "hand %d" % self.hands)

    def repaired(self, sim, link, ev, stopped):
        fault = ev["name"]
        self.repairs.append((fault, stopped))
        if "MemoryError" in str(ev.get("detail")):
            self.memory_errors.append(ev["detail"])
        self.log = sim.firmware_log()
        # Not while a hand waits: the virtual players play on through the
        # stop, and the hand then differs from its replay (see above).
        if stopped != "in_hand" and len(self.visits) < 2:
            self.visit(sim, link, "at %s (%s stopped)" % (fault, stopped))


def run(hands=HANDS, seed=SEED, heap=HEAP, fault_rate=FAULT_RATE, log=None, telemetry=False):
    """The soak with its reports: (the soak's summary, Reports). A firmware
    starved of heap may stop answering the link, which ends the soak with a
    LinkError: the summary is then {"error": ...}, the reports as far as
    they came. `telemetry`: the table publishes to a broker all along."""
    reports = Reports()
    with contextlib.ExitStack() as stack:
        if telemetry:
            from host_tools.bench import telemetry_heap
            from host_tools.qa.soak import one_table
            stack.enter_context(telemetry_heap.on(one_table))
        try:
            out = soak(hands, seed, fault_rate, log=log, live_burst=LIVE_BURST, heap=heap,
                       hooks=reports)
        except LinkError as e:
            out = {"error": "the soak ended: %s" % e}
    return out, reports


# What the details keep of the soak's summary (None where it ended early).
SOAK_KEYS = ("hands", "injected", "faults", "fault_kinds", "landed", "ok", "mismatches",
             "stuck", "firmware_errors", "restarts", "dropped", "counters_equal", "virtual_s",
             "error")


def measure(hands=HANDS, seed=SEED, heap=HEAP, fault_rate=FAULT_RATE, log=None,
            telemetry=False):
    t0 = time.monotonic()
    out, r = run(hands, seed, heap, fault_rate, log, telemetry)
    wall_s = round(time.monotonic() - t0, 1)
    got = [s for _when, s in r.samples]
    least = min(s[2] for s in got) if got else None
    figures = {"image_soak_heap_bytes": heap, "image_soak_min_free_block_bytes": least}
    details = {
        "heap": heap, "seed": seed, "hands_asked": hands, "fault_rate": fault_rate,
        "telemetry": telemetry,
        "soak": {k: out.get(k) for k in SOAK_KEYS},
        "repairs": r.repairs, "visits": r.visits,
        "samples": len(got), "missed_reports": r.missed,
        "max_free_min": least, "max_free_max": max(s[2] for s in got) if got else None,
        "at_min": [w for w, s in r.samples if s[2] == least][:3],
        "free_min": min(s[1] for s in got) if got else None,
        "used_max": max(s[0] for s in got) if got else None,
        "first": r.samples[:KEEP], "last": r.samples[-KEEP:],
        "memory_errors": r.memory_errors[:3] + (["in the log"] if "MemoryError" in r.log else []),
        "traceback": "Traceback" in r.log, "wall_s": wall_s,
        "port": "MicroPython 1.28.0 unix port, 32-bit (gcc -m32), firmware frozen (the twin)",
    }
    why = failure(details)
    if why:
        raise FragmentationFailed(why, figures, details)
    return figures, details


def failure(d):
    """Why the run does not count (empty when it does)."""
    o = d["soak"]
    whys = []
    if d["memory_errors"]:
        whys.append("MemoryError: %s" % d["memory_errors"][0])
    if o["dropped"]:
        whys.append("%d events or answers dropped (no heap for them, or the host's pty full)"
                    % o["dropped"])
    if o["error"]:
        whys.append(o["error"])
    elif not o["ok"]:
        whys.append("the soak failed its checks (mismatches %d, stuck %d, firmware errors %d, "
                    "restarts %d, counters equal %s, hands %d of %d)" % (
                        o["mismatches"], o["stuck"], o["firmware_errors"], o["restarts"],
                        o["counters_equal"], o["hands"], d["hands_asked"]))
    if not d["visits"]:
        whys.append("no service visit")
    elif not all(v["ok"] for v in d["visits"]):
        whys.append("a service visit failed")
    if not d["samples"] or d["missed_reports"]:
        whys.append("heap reports missing: %d received, missed %s"
                    % (d["samples"], d["missed_reports"][:3]))
    return "; ".join(whys)


def main(argv=None):
    import argparse
    import json
    ap = argparse.ArgumentParser(prog="python -m host_tools.bench.fragmentation",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=HANDS)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--telemetry", action="store_true",
                    help="the table publishes to a real broker all along (make broker)")
    args = ap.parse_args(argv)
    log = None if args.json else (lambda s: print(s, flush=True))
    try:
        figures, details = measure(args.hands, args.seed, log=log, telemetry=args.telemetry)
        why = ""
    except FragmentationFailed as e:
        figures, details, why = e.figures, e.details, str(e)
    if args.json:
        print(json.dumps({"figures": figures, "details": details, "error": why or None}))
    else:
        d = details
        o = d["soak"]
        key = "image_soak_min_free_block_bytes"
        target = tg.targets(figures)[key]
        print("%s: %s B (target %s %d: %s)" % (key, figures[key], target["op"], target["value"],
                                               tg.verdict(figures[key], target)))
        stopped = {}
        for _fault, state in d["repairs"]:
            stopped[state] = stopped.get(state, 0) + 1
        print("%s hands (seed %d) in a %d B heap; %s faults injected, %d repaired %s, "
              "the states they stopped %s" % (
                  o["hands"], d["seed"], d["heap"], o["injected"], len(d["repairs"]),
                  o["fault_kinds"], stopped))
        print("visits: %s" % ", ".join("%s (%s)" % (v["when"], "ok" if v["ok"] else "FAILED")
                                   for v in d["visits"]))
        print("%d reports: largest free block %s..%s B (smallest at %s), free at least %s B; "
              "dropped %s, mismatches %s; %s s virtual in %s s" % (
                  d["samples"], d["max_free_min"], d["max_free_max"], ", ".join(d["at_min"]),
                  d["free_min"], o["dropped"], o["mismatches"], o["virtual_s"], d["wall_s"]))
        print("FAILED: " + why if why
              else "measured: no MemoryError, nothing dropped, the soak passed")
    return 1 if why else 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
