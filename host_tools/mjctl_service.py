"""mjctl's service commands (docs/technician.md): what a technician runs on
a table, with `--port DEV` or on the virtual table with `--sim`.

    mjctl --port DEV [--json] hand                  the current hand's public state
    mjctl --port DEV [--json] log                   faults and service sessions
    mjctl --port DEV [--json] clear                 clear the active fault
    mjctl --port DEV [--json] sensors | counters | live | dice-test N | config get|validate
    mjctl --port DEV --key FILE [--json] jog plate 500
    mjctl --port DEV --key FILE [--json] jog lane 2 300
    mjctl --port DEV --key FILE [--json] jog lift_up 1 1500
    mjctl --port DEV --key FILE [--json] selftest
    mjctl --port DEV --key FILE [--json] config set timings.lift_up_ms 4200
    mjctl --port DEV --key FILE [--json] rfid audit | rfid learn

A command that moves, writes or reads tags opens a service session with the
table's key (HMAC challenge-response, docs/protocol.md), runs, and closes
it. Under --sim the virtual table's own key is used.
"""

import json
import math
from pathlib import Path

from host_tools.link_client import LinkClient


def _link(args, fn):
    """fn(link, key) on the chosen controller; the key from --key, or the
    virtual table's own under --sim."""
    if args.sim:
        from host_tools.mjctl import sim_key
        from host_tools.vtable.launcher import SimTable
        with SimTable(seed=args.seed, faults=args.fault, heap=args.heap, form=args.form,
                      key=sim_key(args)) as sim:
            with LinkClient(sim.link_path) as link:
                link.hello()
                return fn(link, sim.key)
    key = Path(args.key).read_bytes() if getattr(args, "key", None) else None
    from host_tools import linkmux
    with LinkClient(linkmux.shared(args.port)) as link:   # shared with other windows
        link.hello()
        return fn(link, key)


def _answer(args, op, human):
    """One request; its answer printed (--json: as JSON, else by `human`)."""
    def run(link, _key):
        _emit(args, _fields(link.request(op)), human)
        return 0
    return _link(args, run)


def cmd_current_hand(args):
    return _answer(args, "hand", _human_hand)


def cmd_clear(args):
    return _answer(args, "clear", lambda o: _console().print(
        "cleared fault %s" % o["cleared"] if o["cleared"] else "no fault was active"))


def cmd_log(args):
    def run(link, _key):
        faults = link.request("faults")["faults"]
        service = link.request("service_log")["entries"]
        out = {"faults": faults, "service": [{"t": t, "what": w} for t, w in service]}
        _emit(args, out, _human_log)
        return 0
    return _link(args, run)


def cmd_sensors(args):
    return _answer(args, "sensors", _human_sensors)


def cmd_live(args):
    """status and sensors every `--every` s, redrawn in place (--json: one
    line per refresh); `--count N` stops after N refreshes, else Ctrl-C."""
    import time

    def snapshot(link):
        st = link.request("status")
        se = _fields(link.request("sensors"))
        return {"state": st["state"], "phase": st["phase"], "fault": st["fault"],
                "uptime": st["uptime"], "sensors": se}

    def run(link, _key):
        n = 0
        live = None
        if not args.json:
            from rich.live import Live
            live = Live(auto_refresh=False)
            live.start()
        try:
            while args.count is None or n < args.count:
                snap = snapshot(link)
                n += 1
                if live is None:
                    print(json.dumps(snap), flush=True)
                else:
                    live.update(_live_view(snap), refresh=True)
                if args.count is None or n < args.count:
                    time.sleep(args.every)
        except KeyboardInterrupt:
            pass
        finally:
            if live is not None:
                live.stop()
        return 0
    return _link(args, run)


def cmd_counters(args):
    return _answer(args, "counters", _human_counters)


def cmd_config(args):
    if args.action == "validate":          # on this PC, with the firmware's own checker
        from firmware.config import load
        try:
            cfg = load(args.file)
        except ValueError as e:            # the config's own message
            _emit(args, {"ok": False, "error": str(e)},
                  lambda o: _console().print("[red]%s[/]" % o["error"]))
            return 1
        _emit(args, {"ok": True, "ruleset": cfg.ruleset_name, "tile_sets": cfg.tile_sets},
              lambda o: _console().print("[green]valid[/]: ruleset %s, %d tile set(s)"
                                         % (o["ruleset"], o["tile_sets"])))
        return 0

    if args.action == "set":
        return _config_set(args)

    def run(link, _key):
        args_ = {"key": args.file} if args.file else {}
        out = _fields(link.request("config_get", **args_))
        _emit(args, out, lambda o: _console().print(json.dumps(o, indent=1)))
        return 0
    return _link(args, run)


def _config_set(args):
    if not args.file or args.value is None:
        raise SystemExit("mjctl: config set KEY VALUE (KEY: a top key, timings.NAME or pins.NAME)")
    try:
        value = json.loads(args.value)     # 4200, [1, 2], "fuzhou144"
    except ValueError:
        value = args.value                 # a bare word: a string

    def run(link, session):
        out = link.request("config_set", session=session, key=args.file, value=value)
        _emit(args, {"key": out["key"], "value": out["value"], "restart": out["restart"]},
              lambda o: _console().print("%s = %s written; it takes effect when the"
                                         " controller restarts" % (o["key"], json.dumps(o["value"]))))
        return 0
    return _serviced(args, run)


def _serviced(args, fn):
    """fn(link, session) within a service session opened with the table's
    key, closed afterwards (refusals are the controller's, with its reason)."""
    def run(link, key):
        if key is None:
            raise SystemExit("mjctl: this command needs the table's key: --key FILE"
                             " (made by make deploy)")
        session = link.open_service(key)
        try:
            return fn(link, session)
        finally:
            link.request("service_close")
    return _link(args, run)


def cmd_rfid(args):
    """rfid audit | learn: scan the walls in the lanes (every side), then
    compare with the ruleset, or learn the tag table from a reference set."""
    def run(link, session):
        link.request("rfid_scan", session=session)
        if args.json:
            done = link.wait_event(lambda e: e["ev"] == "scanned", timeout=30.0)
        else:
            with _console().status("reading the four walls' tags"):
                done = link.wait_event(lambda e: e["ev"] == "scanned", timeout=30.0)
        if done["sides"] < 4:
            raise SystemExit("mjctl: the scan stopped after %d sides (see mjctl status: the"
                             " reader's fault)" % done["sides"])
        out = _fields(link.request("rfid_" + args.action, session=session))
        _emit(args, out, _human_audit if args.action == "audit" else _human_learn)
        if args.action == "audit":
            return 0 if not out["kinds"] and not out["unknown"] else 1
        return 0
    return _serviced(args, run)


def cmd_selftest(args):
    from host_tools import selftest
    console = None if args.json else _console()

    def show(r):
        if console is not None:
            figures = ", ".join("%s %s" % (k, v) for k, v in r.items()
                                if k not in ("item", "pass", "why"))
            console.print("%-9s %s  %s%s" % (r["item"], "[green]PASS[/]" if r["pass"] else
                                             "[red]FAIL[/]", r["why"],
                                             " (%s)" % figures if figures else ""))

    def run(link, key):
        if key is None:
            raise SystemExit("mjctl: selftest needs the table's key: --key FILE (made by make deploy)")
        items = selftest.run(link, key, progress=show)
        ok = all(r["pass"] for r in items)
        if args.json:
            _emit(args, {"ok": ok, "items": items}, None)
        else:
            console.print("selftest: %s" % ("[green]all pass[/]" if ok else "[red]%d of %d fail[/]"
                                             % (sum(not r["pass"] for r in items), len(items))))
        return 0 if ok else 1
    return _link(args, run)


def chi2_p_5(x):
    """P(chi-square with 5 degrees of freedom >= x): the closed form for an
    odd number of degrees (no scipy on the technician's laptop needed)."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3)


def dice_stats(counts):
    """Chi-square of face counts against a fair die, and its p-value."""
    total = sum(counts)
    want = total / 6.0
    chi2 = sum((c - want) ** 2 / want for c in counts)
    return chi2, chi2_p_5(chi2)


def cmd_dice_test(args):
    per_request = 500                      # the controller's bound per request

    def run(link, _key):
        counts = [0] * 6
        left = args.n
        progress = None
        if not args.json:
            from rich.progress import Progress
            progress = Progress(transient=True)
            task = progress.add_task("rolling", total=args.n)
            progress.start()
        try:
            while left > 0:
                n = min(left, per_request)
                got = link.request("dice_test", n=n)["counts"]
                counts = [a + b for a, b in zip(counts, got)]
                left -= n
                if progress is not None:
                    progress.update(task, advance=n)
        finally:
            if progress is not None:
                progress.stop()
        chi2, p = dice_stats(counts)
        out = {"rolls": args.n, "faces": counts, "chi2": round(chi2, 3), "p": round(p, 4),
               "fair": p >= 0.001}
        _emit(args, out, _human_dice)
        return 0 if out["fair"] else 1
    return _link(args, run)


def cmd_jog(args):
    lane = args.what[0] if len(args.what) == 2 else 0
    ms = args.what[-1]

    def run(link, session):
        link.request("jog", session=session, actuator=args.actuator, n=lane, ms=ms)
        _emit(args, {"ok": True, "actuator": args.actuator, "lane": lane, "ms": ms},
              lambda o: _console().print("jogged %s%s for %d ms" % (
                  o["actuator"], " %d" % o["lane"] if o["actuator"] != "plate" else "", o["ms"])))
        return 0
    return _serviced(args, run)


def register(sub):
    from host_tools.mjctl import command
    command(sub, "clear", cmd_clear, "clear the active fault: the table resumes where it stopped",
            False)
    command(sub, "log", cmd_log, "fault history and service sessions, newest first", False)
    command(sub, "sensors", cmd_sensors, "every input and motor as it is now", False)
    p = command(sub, "live", cmd_live, "state, sensors and motors, refreshed in place", False)
    p.add_argument("--every", type=float, default=0.25, metavar="S", help="seconds between reads")
    p.add_argument("--count", type=int, metavar="N", help="stop after N reads")
    command(sub, "counters", cmd_counters, "cycles, hands, lifts, tiles fed, faults by code", False)
    p = command(sub, "dice-test", cmd_dice_test, "roll the table's dice N times: histogram and"
                " chi-square (idle or stopped only)", False)
    p.add_argument("n", type=int, help="rolls of the two dice")
    p = command(sub, "config", cmd_config, "get the controller's config (a KEY), or validate"
                " a config file on this PC", False)
    p.add_argument("action", choices=["get", "set", "validate"])
    p.add_argument("file", nargs="?", metavar="KEY|FILE")
    p.add_argument("value", nargs="?", metavar="VALUE", help="set: the new value, as JSON"
                   " (a bare word is a string); needs --key, takes effect at the next start")
    p = command(sub, "rfid", cmd_rfid, "scan the walls in the lanes: audit them against the"
                " ruleset, or learn the tag table from a reference set (needs --key)", False)
    p.add_argument("action", choices=["audit", "learn"])
    command(sub, "selftest", cmd_selftest, "move each actuator briefly and check it against"
            " its sensor, with measured times (needs --key)", False)
    p = command(sub, "jog", cmd_jog, "run one motor briefly (service: needs --key)", False)
    p.add_argument("actuator", choices=["plate", "lane", "lift_up", "lift_down"])
    p.add_argument("what", type=int, nargs="+", metavar="[LANE] MS",
                   help="for a lane or a lifter its number 0..3, then the time in ms"
                   " (at most 2000; a lifter stops at its switch too)")


# -- output ------------------------------------------------------------------

def _emit(args, obj, human):
    from host_tools.mjctl import emit
    emit(args, obj, human)


def _fields(answer):
    from host_tools.mjctl import fields
    return fields(answer)


def _console():
    from host_tools.mjctl import console
    return console()


def _human_hand(out):
    c = _console()
    if not out.get("active"):
        c.print("no hand is being followed")
        return
    marker = out.get("marker")
    c.print("phase [bold]%s[/], wall %d, reserve %d, drawable %d, gold %s"
            % (out["phase"], out["wall"], out["reserve"], out["drawable"], out.get("gold") or "-"))
    c.print("marker %s, head %s, tail %s, next draw: seat %d, %d events so far"
            % (_stack(marker), _stack(out.get("head")), _stack(out.get("tail")),
               out["turn"], out["n"]))


def _human_sensors(o):
    c = _console()
    c.print("plate rotation %d, revolutions %d, motor %s"
            % (o["plate"][0], o["plate"][1], "on" if o["motors"][0] else "off"))
    for n, (level, count) in enumerate(o["lanes"]):
        c.print("lane %d: count sensor %d, %d tiles counted" % (n, level, count))
    for n, (top, bottom) in enumerate(o["lifters"]):
        c.print("lifter %d: top switch %d, bottom switch %d, %s"
                % (n, top, bottom, o["moving"][n]))
    c.print("lane motors %s, seat keys %s, buzzer %s"
            % (o["motors"][1:], o["keys"], "on" if o["buzzer"] else "off"))


def _live_view(snap):
    from rich.table import Table
    se = snap["sensors"]
    t = Table(title="%s / %s at %.1f s%s" % (snap["state"], snap["phase"], snap["uptime"] / 1000.0,
                                             "  FAULT %d %s" % (snap["fault"]["code"],
                                                                snap["fault"]["name"])
                                             if snap["fault"] else ""))
    for col in ("", "plate", "lane 0", "lane 1", "lane 2", "lane 3"):
        t.add_column(col)
    t.add_row("motor", *["on" if m else "-" for m in se["motors"]])
    t.add_row("sensor", str(se["plate"][0]), *[str(level) for level, _ in se["lanes"]])
    t.add_row("count", "%d rev" % se["plate"][1], *[str(count) for _, count in se["lanes"]])
    t.add_row("lifter", "", *["%s %s%s" % (m, "T" if top else "", "B" if bottom else "")
                              for m, (top, bottom) in zip(se["moving"], se["lifters"])])
    t.add_row("key", "", *[str(k) for k in se["keys"]])
    return t


def _human_counters(o):
    from host_tools import fault_table as table
    c = _console()
    c.print("cycles %d, hands %d, walls lifted %d, tiles fed by lane %s"
            % (o["cycles"], o["hands"], o["lifts"], o["tiles_fed"]))
    for code, n in o["faults"]:
        c.print("fault %d %s: %d" % (code, table.name_of(code), n))


def _human_dice(o):
    from rich.table import Table
    t = Table(title="%d rolls of two dice" % o["rolls"])
    for face in range(1, 7):
        t.add_column(str(face), justify="right")
    t.add_row(*[str(n) for n in o["faces"]])
    c = _console()
    c.print(t)
    c.print("chi-square %.2f (5 degrees of freedom), p = %.4f: %s"
            % (o["chi2"], o["p"], "[green]fair[/]" if o["fair"] else "[red]biased[/]"))


def _stack(pair):
    return "-" if pair is None else "seat %d stack %d" % (pair[0], pair[1])


def _human_log(out):
    from host_tools.mjctl import human_fault, describe_fault
    c = _console()
    c.print("[bold]faults[/] (%d)" % len(out["faults"]))
    for f in out["faults"]:
        c.print("  at %.1f s:" % (f["t"] / 1000.0))
        human_fault(c, describe_fault(f))
    c.print("[bold]service[/]")
    for e in out["service"]:
        c.print("  at %.1f s: %s" % (e["t"] / 1000.0, e["what"]))


def _human_audit(o):
    c = _console()
    c.print("%d tags read, %d unknown; tile kinds that differ from the ruleset: %d"
            % (o["tags"], o["unknown"], o["kinds"]))
    for code, have, want in o["tiles"]:
        c.print("  %-3s %d of %d%s" % (code, have, want, "  [red]missing[/]" if have < want
                                       else "  [red]extra[/]"))
    if o["kinds"] > len(o["tiles"]):
        c.print("  ... and %d more kinds" % (o["kinds"] - len(o["tiles"])))
    c.print("[green]the set matches the ruleset[/]" if not o["kinds"] and not o["unknown"]
            else "[red]the set does not match[/]")


def _human_learn(o):
    _console().print("tag table written: %d tags (%d new, %d changed); it is read when the"
                     " controller restarts" % (o["tags"], o["new"], o["changed"]))
