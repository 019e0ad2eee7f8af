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
from host_tools.texts import pad, t, word


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
        t("svc.cleared", code=o["cleared"]) if o["cleared"] else t("svc.no_fault")))


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
              lambda o: _console().print("[green]%s[/]%s%s" % (t("svc.valid"), t("punct.colon"), t(
                  "svc.valid.text", ruleset=o["ruleset"], sets=o["tile_sets"]))))
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
              lambda o: _console().print(t("svc.config_written", key=o["key"],
                                           value=json.dumps(o["value"]))))
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
            with _console().status(t("svc.rfid_reading")):
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
            figures = t("punct.comma").join("%s %s" % (word("selftest.fig", k), v)
                                            for k, v in r.items()
                                            if k not in ("item", "pass", "why"))
            kind, _, n = r["item"].partition(" ")
            console.print("%s %s  %s%s" % (
                pad(t("part." + kind, n=n), 9),
                "[green]%s[/]" % t("selftest.pass") if r["pass"] else
                "[red]%s[/]" % t("selftest.fail"), r["why"],
                t("punct.paren", text=figures) if figures else ""))

    def run(link, key):
        if key is None:
            raise SystemExit("mjctl: selftest needs the table's key: --key FILE (made by make deploy)")
        items = selftest.run(link, key, progress=show)
        ok = all(r["pass"] for r in items)
        if args.json:
            _emit(args, {"ok": ok, "items": items}, None)
        else:
            verdict = "[green]%s[/]" % t("selftest.all_pass") if ok else "[red]%s[/]" % t(
                "selftest.n_fail", n=sum(not r["pass"] for r in items), of=len(items))
            console.print("%s%s%s" % (t("selftest.name"), t("punct.colon"), verdict))
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
            task = progress.add_task(t("svc.dice_rolling"), total=args.n)
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
        c.print(t("svc.no_hand"))
        return
    marker = out.get("marker")
    c.print(t("svc.hand", phase="[bold]%s[/]" % word("phase", out["phase"]), wall=out["wall"],
              reserve=out["reserve"], drawable=out["drawable"], gold=out.get("gold") or "-"))
    c.print(t("svc.hand.stacks", marker=_stack(marker), head=_stack(out.get("head")),
              tail=_stack(out.get("tail")), seat=out["turn"], n=out["n"]))


def _human_sensors(o):
    c = _console()
    c.print(t("sensors.plate", rotation=o["plate"][0], revolutions=o["plate"][1],
              motor=_on_off(o["motors"][0])))
    for n, (level, count) in enumerate(o["lanes"]):
        c.print(t("sensors.lane", n=n, level=level, count=count))
    for n, (top, bottom) in enumerate(o["lifters"]):
        c.print(t("sensors.lifter", n=n, top=top, bottom=bottom,
                  moving=word("lift", o["moving"][n])))
    c.print(t("sensors.rest", motors=o["motors"][1:], keys=o["keys"],
              buzzer=_on_off(o["buzzer"])))


def _on_off(on):
    return t("switch.on") if on else t("switch.off")


def _live_view(snap):
    from rich.table import Table
    se = snap["sensors"]
    from host_tools.texts import fault_texts
    fault = snap["fault"]
    table = Table(title=t("live.title", state=word("state", snap["state"]),
                          phase=word("build", snap["phase"]), s=snap["uptime"] / 1000.0)
                  + ("  " + t("live.fault", code=fault["code"], name=fault_texts(fault["code"])[0])
                     if fault else ""))
    table.add_column("")
    table.add_column(t("part.plate"))
    for n in range(4):
        table.add_column(t("part.lane", n=n))
    table.add_row(t("live.motor"), *[t("switch.on") if m else "-" for m in se["motors"]])
    table.add_row(t("live.sensor"), str(se["plate"][0]), *[str(level) for level, _ in se["lanes"]])
    table.add_row(t("live.count"), t("live.rev", n=se["plate"][1]),
                  *[str(count) for _, count in se["lanes"]])
    table.add_row(t("label.lifter"), "", *["%s %s%s" % (word("lift", m), "T" if top else "",
                                                       "B" if bottom else "")
                                          for m, (top, bottom) in zip(se["moving"], se["lifters"])])
    table.add_row(t("live.key"), "", *[str(k) for k in se["keys"]])
    return table


def _human_counters(o):
    from host_tools.texts import fault_texts
    c = _console()
    c.print(t("counters.text", cycles=o["cycles"], hands=o["hands"], lifts=o["lifts"],
              fed=o["tiles_fed"]))
    for code, n in o["faults"]:
        c.print("%s%s%d" % (t("fault.head", code=code, name=fault_texts(code)[0]), t("punct.colon"),
                            n))


def _human_dice(o):
    from rich.table import Table
    table = Table(title=t("dice.title", n=o["rolls"]))
    for face in range(1, 7):
        table.add_column(str(face), justify="right")
    table.add_row(*[str(n) for n in o["faces"]])
    c = _console()
    c.print(table)
    c.print(t("dice.chi2", chi2=o["chi2"], p=o["p"], verdict="[green]%s[/]" % t("dice.fair")
              if o["fair"] else "[red]%s[/]" % t("dice.biased")))


def _stack(pair):
    return "-" if pair is None else t("svc.stack", seat=pair[0], stack=pair[1])


def _human_log(out):
    from host_tools.mjctl import human_fault, describe_fault
    c = _console()
    c.print("[bold]%s[/]%s" % (t("log.faults"), t("punct.paren", text=len(out["faults"]))))
    for f in out["faults"]:
        c.print("  %s%s" % (t("log.at", s=f["t"] / 1000.0), t("punct.colon").rstrip()))
        human_fault(c, describe_fault(f))
    c.print("[bold]%s[/]" % t("log.service"))
    for e in out["service"]:
        c.print("  %s%s%s" % (t("log.at", s=e["t"] / 1000.0), t("punct.colon"), e["what"]))


def _human_audit(o):
    c = _console()
    c.print(t("audit.text", tags=o["tags"], unknown=o["unknown"], kinds=o["kinds"]))
    for code, have, want in o["tiles"]:
        c.print("  %-3s %s  [red]%s[/]" % (code, t("audit.have", have=have, want=want),
                                          t("audit.missing") if have < want else t("audit.extra")))
    if o["kinds"] > len(o["tiles"]):
        c.print("  " + t("audit.more", n=o["kinds"] - len(o["tiles"])))
    c.print("[green]%s[/]" % t("audit.match") if not o["kinds"] and not o["unknown"]
            else "[red]%s[/]" % t("audit.no_match"))


def _human_learn(o):
    _console().print(t("learn.text", tags=o["tags"], new=o["new"], changed=o["changed"]))
