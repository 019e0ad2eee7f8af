"""`make soak`: hand after hand on the virtual table, with faults.

    python -m host_tools.qa.soak [--hands N] [--seed S] [--tables T] [--fault-rate R]
                              [--pace brisk|parlour] [--fuzz-frames N]
                              [--live-burst N] [--json]

One virtual table, the real firmware under MicroPython, players for every
set of walls (`Parlour`), playing at the soak's brisk pace (`BriskPlayers`,
below; `--pace parlour` for the pace of `make run`). At each new set of walls, with probability R, a
fault is injected at a random moment of the next minute of play (while the
next set is built during a hand, or a hand is followed); when the firmware
reports it, the technician repairs the table and clears the fault. Every
hand the controller followed is compared, event by event, with the rules'
replay of what the players did.

It passes when: no firmware exception (no `firmware_error`, no traceback),
no stuck state (an event at least every `STUCK_S` and a hand's result at
least every `HAND_S` of wall time), no hand
that differs from its replay, and the controller's counters equal the
virtual table's own counts (tiles fed per lane, sets lifted, hands).

The link is fuzzed too (host_tools/qa/linkfuzz/): after
every hand's result, `--live-burst` mutated, truncated, oversized and
random frames go down the live link in one write, then a `status` that
must be answered, while the table builds and plays on (no restart, no
traceback, garbage counted in status.link); and `--fuzz-frames` frames
(1,000,000 by default) are fed in process to the controller's own link
server, frame reader and request decoder. Both counts are in the summary
(`link_fuzz`).

`--tables T` plays the hands on T independent tables at once, each in its
own process (seeds S, S+1, ...; the hands shared out, the first tables
taking one more when they do not divide), every table checked in full as
above; the summary gives each table's figures and their totals, and it
passes only when every table does. The in-process fuzz runs once, beside
them.
Prints a summary (or JSON); exit 0 when it passes, 1 when not.
"""

import argparse
import json
import random
import subprocess
import sys
import threading
import time

from engine_core.replay import PUBLIC_KEYS, replay
from host_tools.qa import linkfuzz
from host_tools.link.client import LinkClient, LinkError
from host_tools.cli.ops import public_state
from host_tools.image.mpenv import ROOT
from host_tools.sim import technician
from host_tools.sim.hand_players import HandPlayers, Parlour
from host_tools.sim.launcher import SimTable

STUCK_S = 30.0                 # wall seconds without an event: the table is stuck
HAND_S = 60.0                  # wall seconds without a hand's result: stuck too (a hand
                               # takes about 1 s; events may still come, e.g. refusals)
# Faults the table recovers from by a repair and `clear` (docs/faults.md);
# audit faults and power cuts need the lanes emptied: not injected here.
KINDS = ("lane_jam:0", "lane_jam:1", "lane_jam:2", "lane_jam:3", "plate_stall",
         "rfid_timeout", "display_unplugged")
class BriskPlayers(HandPlayers):
    """The soak's players: brisk ones. The firmware ticks every 10 ms of
    virtual time whatever happens, so a soak hand's wall time follows its
    virtual time, and most of a hand at `make run`'s pace is players
    thinking (1.5-4 s before each draw) while nothing moves. Brisk players
    draw 0.5-1 s after the previous event's last tile and deal a tile every
    100 ms (a dealer taking blocks of four in 0.4 s): a hand takes about
    half the virtual time. What they exercise is the same:
    * the events that come from a key or from no rule keep the parlour's
      1.5-4 s before them: a kong's key, a win's key, a stray take. The
      firmware applies a key press when it sees it, but a draw only when
      the reader has seen its tile gone in two reads of its side (0.6 s
      to over 1.5 s while the builder also reads the platform): a kong
      key pressed 0.7 s after a draw can be applied before that draw, and
      the hand then differs from its replay (found with a brisk kong; see
      docs/reliability.md). Brisk draws cannot overtake one another: a
      head tile seen gone before the previous draw's waits, and is
      explained, at the latest, in the read that would call it irregular;
    * the other pauses the firmware's timing needs are the parlour's: a
      kong's key press to its replacement (`press_ms`), a stray take to the
      next event (`after_take_ms`: the table publishes it within 1.5 s),
      the flowers and the gold from the tail (`tail_ms`, `gold_ms`), the
      deal's start after the dice, a win's key hold, a draw's grace time;
    * the next set is still built during the hand: a build takes about
      28 s from the walls up, a brisk hand 36-57 s in play (mean 50 s,
      seed 9; a win after a few events would end before its build, and the
      table would finish the build first, as at any pace after an early
      win);
    * faults still land at a random moment of the minute after the walls
      are up: during the build (its first ~28 s), during the play, and
      some after the hand, in the lift or the dice (`landed` in the
      summary counts where)."""
    deal_ms = 100
    think_ms = (500, 1000)
    key_think_ms = HandPlayers.think_ms


PACES = {"brisk": BriskPlayers, "parlour": HandPlayers}


class Injector:
    """Attached to the virtual table, so that it acts in the table's own
    thread: injects the planned faults at their virtual time, and sends
    the technician (sim/technician.py) when asked (`repair()` from the
    host, then wait)."""

    def __init__(self, table, rng, rate, parlour=None):
        self.table = table
        self.parlour = parlour     # to tell whether a hand is in play at a fault
        self.rng = rng
        self.rate = rate
        self.planned = None        # (t, kind)
        self.active = None         # the kind injected, until repaired
        self.injected = []         # (t, kind)
        self.landed = {"building_in_hand": 0, "building": 0, "in_hand": 0, "other": 0}
        self._asked = False
        self._fault = None
        self.tipped = [0, 0, 0, 0]  # tiles fed, then tipped into the tray, by lane
        self.repaired = threading.Event()
        table.attach(self)

    def repair(self, fault):
        """Send the technician for `fault` (its name): at the table's next
        step, technician.visit repairs what was injected, and after an audit
        fault or a cut power tips the lanes into the tray first."""
        self.repaired.clear()
        self._fault = fault
        self._asked = True

    # -- the table's hooks (its thread) ----------------------------------------

    def walls_up(self, now):
        if self.planned is None and self.active is None and self.rng.random() < self.rate:
            self.planned = (now + self.rng.randrange(1000, 60000), self.rng.choice(KINDS))

    def dice_shown(self, now, a, b):
        pass

    def next_time(self, now):
        if self._asked:
            return now
        return self.planned[0] if self.planned else None

    def run(self, dt):
        pass

    def fire(self, now):
        if self._asked:
            self._asked = False
            # The tiles it tips back were fed but will never be lifted:
            # the controller counts tiles fed by the walls it lifts.
            _, tipped = technician.visit(self.table, self._fault,
                                         [] if self.active is None else [self.active])
            self.active = None
            if tipped is not None:
                self.tipped = [a + b for a, b in zip(self.tipped, tipped)]
            self.repaired.set()
        if self.planned is not None and now >= self.planned[0]:
            kind = self.planned[1]
            self.planned = None
            self._landed()
            self.table.inject(kind)
            self.active = kind
            self.injected.append((now, kind))

    def _landed(self):
        """Where a fault lands: with the next set building (the plate or a
        lane running) and/or a hand in play (players planned it, not done)."""
        table = self.table
        building = table.plate.duty > 0 or any(lane.feed for lane in table.lanes)
        hp = self.parlour.current if self.parlour is not None else None
        playing = hp is not None and hp.scenario is not None and not hp.done
        key = ("building_in_hand" if building and playing else "building" if building
               else "in_hand" if playing else "other")
        self.landed[key] += 1


def soak(hands, seed=1, fault_rate=0.1, log=None, fuzz_frames=0, live_burst=50,
         pace="brisk", max_wall=None, heap=None, hooks=None):
    """Play `hands` hands on one table; the summary dict (its "ok": it passed).
    live_burst: fuzzed frames on the link after each hand's result;
    fuzz_frames: frames fed in process to the link server (linkfuzz);
    pace: the players' (PACES); max_wall: wall seconds after which the
    hand whose dice come next is the last (the end's checks still run;
    "complete" says whether every hand asked for was played).
    heap: the firmware's heap in bytes (SimTable; None: the port's own).
    hooks: instruments (host_tools/bench/fragmentation.py) with
      ready(sim, link): the firmware answered, before `start`;
      hand_over(sim, link): after each hand's result and its live fuzz;
      repaired(sim, link, ev, stopped): the technician has repaired the
        fault of the `fault` event `ev`, before `clear`: the table is
        stopped by it, when a service session is allowed; `stopped` is
        the state it stopped ("in_hand": a hand waits, its players do not)."""
    rng = random.Random(seed)
    fuzz_rng = random.Random("soak-linkfuzz:%s" % seed)
    out = {"hands": 0, "mismatches": 0, "faults": 0, "stuck": 0, "firmware_errors": 0,
           "results": {"win": 0, "draw": 0}, "seed": seed, "fault_rate": fault_rate,
           "pace": pace, "asked": hands}
    live = {"frames": 0, "bursts": 0, "answered": 0, "failures": []}
    t0 = time.monotonic()
    with SimTable(seed=seed, heap=heap) as sim:
        parlour = Parlour(sim.table, seed, players_class=PACES[pace])
        tech = Injector(sim.table, rng, fault_rate, parlour)
        with LinkClient(sim.link_path) as link:
            link.hello()
            link_before = link.request("status")["link"]
            if hooks is not None:
                hooks.ready(sim, link)
            link.request("start")
            state = "idle"             # the last state but "fault": what a fault stops
            observed = []
            last = []                  # the last events, for a stuck table's report
            hand_at = time.monotonic()
            ending = False             # the last hand's dice are shown: no more dice
            played = False             # ... its result has come
            walls_up = False           # ... and the next set is up: the end
            while not walls_up:
                ev = link.next_event(timeout=STUCK_S)
                if ev is None or time.monotonic() - hand_at > HAND_S:
                    out["stuck"] += 1
                    try:                   # a stuck table may not answer at all
                        out["stuck_status"] = link.request("status")
                    except LinkError as e:
                        out["stuck_status"] = "no answer (%s)" % e
                    out["stuck_events"] = last
                    break
                last = (last + [ev])[-12:]
                name = ev["ev"]
                if name == "state" and ev["state"] != "fault":
                    state = ev["state"]
                if name == "fault":
                    out["faults"] += 1
                    kinds = out.setdefault("fault_kinds", {})
                    kinds[ev["name"]] = kinds.get(ev["name"], 0) + 1
                    out["firmware_errors"] += ev["name"] == "firmware_error"
                    if log:
                        log("fault %s at %d ms: %s" % (ev["name"], ev["t"], ev["detail"]))
                    tech.repair(ev["name"])
                    if not tech.repaired.wait(STUCK_S):
                        out["stuck"] += 1
                        break
                    if hooks is not None:
                        hooks.repaired(sim, link, ev, state)
                    link.request("clear")
                elif name == "dice" and not ev.get("gold") and (
                        out["hands"] == hands - 1
                        or (max_wall is not None and time.monotonic() - t0 >= max_wall)):
                    # The last hand's dice. Compare the counters where both
                    # count the same tiles: the controller counts the tiles
                    # of the walls it lifts when the lift begins, the table
                    # the tiles fed into the lanes, and the next set is built
                    # from the dice on. So nobody presses the dice key again:
                    # after this hand the table lifts the set built during
                    # it and waits at the dealer's turn with empty lanes.
                    sim.table.players.auto_dice = False
                    ending = True
                elif name == "state" and ev["state"] == "dealer":
                    walls_up = played
                elif name == "hand":
                    if ev["n"] == 0:
                        observed = []
                    observed.append(public_state(ev))
                elif name == "result":
                    players = _players_of(parlour, ev["t"])
                    want = replay(players.scenario)
                    same = len(want) == len(observed) and all(
                        {k: a[k] for k in PUBLIC_KEYS} == {k: b[k] for k in PUBLIC_KEYS}
                        for a, b in zip(observed, want))
                    out["mismatches"] += not same
                    if not same and len(out.setdefault("mismatched", [])) < 3:
                        out["mismatched"].append(_first_difference(
                            out["hands"], players, observed, want))
                    out["results"]["draw" if ev["winner"] is None else "win"] += 1
                    out["hands"] += 1
                    played = ending
                    hand_at = time.monotonic()
                    if live_burst:
                        _live_fuzz(link, fuzz_rng, live_burst, live)
                    if hooks is not None:
                        hooks.hand_over(sim, link)
                    if log and out["hands"] % 50 == 0:
                        log("%d hands, %d faults" % (out["hands"], out["faults"]))
            counters = link.request("counters")
            link_after = link.request("status")["link"]
        table = sim.table.counters()
        out["restarts"] = sim.restarts
        live["garbage"] = link_after["garbage"] - link_before["garbage"]
        live["bad_crc"] = link_after["bad_crc"] - link_before["bad_crc"]
        live["errors"] = link_after["errors"] - link_before["errors"]
        # Frames the controller dropped: the host's pty full, or no heap for
        # an event or an answer (a dropped hand event shows as a mismatch).
        out["dropped"] = link_after["dropped"] - link_before["dropped"]
        out["injected"] = len(tech.injected)
        out["injected_kinds"] = {}
        for _t, kind in tech.injected:
            kind = kind.split(":")[0]
            out["injected_kinds"][kind] = out["injected_kinds"].get(kind, 0) + 1
        out["landed"] = tech.landed
        out["traceback"] = "Traceback" in sim.firmware_log()
        out["counters"] = {k: counters[k] for k in ("cycles", "hands", "lifts", "tiles_fed")}
        out["table_counts"] = {"tiles_fed": [fed - back for fed, back in
                                             zip(table["tiles_fed"], tech.tipped)],
                               "tipped": tech.tipped,
                               "lifts": table["lifter_cycles"][0],
                               "firmware_errors": table["firmware_errors"]}
        out["virtual_s"] = round(sim.table.now / 1000.0, 1)
    out["wall_s"] = round(time.monotonic() - t0, 1)
    live["ok"] = (live["answered"] == live["bursts"] and not live["failures"]
                  and (not live["frames"] or live["garbage"] > 0))
    out["link_fuzz"] = {"live": live}
    if fuzz_frames:
        if log:
            log("link fuzz: %d frames in process" % fuzz_frames)
        f = linkfuzz.inprocess(fuzz_frames, seed)
        f["failures"] = f["failures"][:3]
        out["link_fuzz"]["inprocess"] = f
    out["link_fuzz"]["frames"] = live["frames"] + (fuzz_frames and out["link_fuzz"]["inprocess"]["frames"])
    fuzz_ok = live["ok"] and (not fuzz_frames or out["link_fuzz"]["inprocess"]["ok"])
    out["counters_equal"] = (out["counters"]["tiles_fed"] == out["table_counts"]["tiles_fed"]
                             and out["counters"]["lifts"] == out["table_counts"]["lifts"]
                             and out["counters"]["hands"] == out["hands"])
    out["complete"] = out["hands"] == hands
    out["checks_ok"] = (out["hands"] > 0 and not out["mismatches"] and not out["stuck"]
                 and not out["firmware_errors"] and not out["traceback"]
                 and not out["table_counts"]["firmware_errors"] and out["counters_equal"]
                 and not out["restarts"] and fuzz_ok)
    out["ok"] = out["checks_ok"] and out["complete"]
    return out


def _players_of(parlour, t):
    """The players of the hand that ended at t (the firmware's clock is the
    table's): those of the last walls up before it. The table runs ahead of
    this loop, which reads the link in wall time: by the time it reads a
    result, the next set's walls may be up and its players the current."""
    for players in reversed(parlour.hands):
        if players.walls_up_at is not None and players.walls_up_at <= t:
            return players
    return parlour.current


def _first_difference(n, players, observed, want):
    """What a mismatched hand's report keeps: its number, the players'
    seed, and the first state that differs (observed, replayed), or the
    replay's refusal of the hand's scenario."""
    if isinstance(want, dict):
        return {"hand": n, "players": players.seed, "events": len(observed),
                "replay_error": want.get("error")}
    for i, (a, b) in enumerate(zip(observed, want)):
        a = {k: a[k] for k in PUBLIC_KEYS}
        b = {k: b[k] for k in PUBLIC_KEYS}
        if a != b:
            return {"hand": n, "players": players.seed, "event": i, "observed": a, "replay": b,
                    "events": len(observed), "replayed": len(want)}
    return {"hand": n, "players": players.seed, "events": len(observed), "replayed": len(want)}


def _live_fuzz(link, rng, n, live):
    """n fuzzed frames on the live link, then a status: it must be answered."""
    try:
        st = linkfuzz.live_burst(link, rng, n)
        live["answered"] += st["ok"] is True
    except LinkError as e:
        live["failures"].append("after %d frames: %s" % (live["frames"] + n, e))
    live["frames"] += n
    live["bursts"] += 1


def soak_tables(hands, tables, seed=1, fault_rate=0.1, log=None, fuzz_frames=0,
                live_burst=50, pace="brisk", max_wall=None):
    """`hands` shared out over `tables` independent tables played at once,
    one process each (`python -m host_tools.qa.soak --tables 1 --json`, seeds
    seed, seed+1, ...), each checked in full by its own `soak`; the fuzz in
    process runs here meanwhile. The summary: every table's (`tables`) and
    the totals; "ok" only when every table passed and the hands add up."""
    if tables == 1:
        out = soak(hands, seed, fault_rate, log, fuzz_frames, live_burst, pace, max_wall)
        return _totals(hands, [out], out["wall_s"], out["link_fuzz"].get("inprocess"))
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
    return _totals(hands, outs, round(time.monotonic() - t0, 1), inprocess)


def _totals(hands, outs, wall_s, inprocess):
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


def main(argv=None):
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
    args = ap.parse_args(argv)
    if args.tables < 1 or args.hands < args.tables:
        ap.error("--tables must be between 1 and --hands")
    if args.json:
        log = (lambda s: print("table %d: %s" % (args.seed, s), file=sys.stderr, flush=True)
               ) if args.progress else None
    else:
        log = lambda s: print(s, flush=True)  # noqa: E731
    if args.json and args.tables == 1:
        # One table's own summary, as before (and what --tables reads).
        out = soak(args.hands, args.seed, args.fault_rate, log, args.fuzz_frames,
                   args.live_burst, args.pace, args.max_wall)
        print(json.dumps(out))
        return 0 if out["ok"] else 1
    out = soak_tables(args.hands, args.tables, args.seed, args.fault_rate, log,
                      args.fuzz_frames, args.live_burst, args.pace, args.max_wall)
    if args.json:
        print(json.dumps(out))
    else:
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
    return 0 if out["ok"] else 1


def _line(o):
    return ("%(hands)d hands (%(results)s), %(faults)d faults %(fault_kinds)s (%(injected)d "
            "injected %(injected_kinds)s, landed %(landed)s), %(mismatches)d mismatches, %(stuck)d stuck, "
            "%(firmware_errors)d firmware errors, %(restarts)d restarts; counters %(counters)s, "
            "the table's %(table_counts)s, equal: %(counters_equal)s; "
            "%(virtual_s)s s virtual in %(wall_s)s s" % o)


if __name__ == "__main__":
    sys.exit(main())
