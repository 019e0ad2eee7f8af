"""mjctl's service-session commands (docs/technician.md): the host's side
of firmware/link/service.py, with `--port DEV` or on the virtual table
with `--sim`.

    mjctl --port DEV --key FILE [--json] jog plate 500
    mjctl --port DEV --key FILE [--json] jog lane 2 300
    mjctl --port DEV --key FILE [--json] jog lift_up 1 1500
    mjctl --port DEV --key FILE [--json] config set timings.lift_up_ms 4200
    mjctl --port DEV [--json] config get [KEY]       (no key needed)
    mjctl [--json] config validate FILE             (on this PC, no table)
    mjctl --port DEV --key FILE [--json] rfid audit | rfid learn
    mjctl --port DEV --key FILE [--json] selftest
    mjctl --port DEV --key FILE [--json] dice-test N
    mjctl --port DEV --key FILE [--json] new-game

A command that moves, writes, reads tags, rolls the dice or draws the
first dealer again opens a service session with the table's key (HMAC
challenge-response, docs/protocol.md), runs, and closes it. Under --sim the virtual table's own key is used.
"""

import json
import sys

from rich.markup import escape

from host_tools.texts import pad, word
from host_tools.cli.common import (EXIT_INPUT, EXIT_REFUSED, CliError, command, console, emit,
                                   fault_name, fields, on_table, plain, read_key, t)
from host_tools.cli import selftest
from host_tools.cli.ops import dice_stats
from host_tools.texts.refusal import said

JOG_MAX_MS = 2000              # the firmware's bound (firmware/link/service.py)
DICE_TEST_MAX = 100000         # rolls per dice-test: 200 requests of the controller's 500


def _serviced(args, fn):
    """fn(link, session) within a service session opened with the table's
    key, closed afterwards, also on Ctrl-C or an error (closing it stops a
    jog it started: firmware/link/service.py)."""

    def run(link, key):
        session = link.open_service(key)
        try:
            return fn(link, session)
        finally:
            link.close_service(session)
    _need_key(args)
    return on_table(args, run)


def _need_key(args):
    """Before anything is sent: a command that needs the key has one."""
    if not args.sim and not getattr(args, "key", None):
        raise CliError(EXIT_INPUT, t("err.needs_key", command=args.command))
    if not args.sim:
        read_key(args.key)


def jog_arguments(actuator, words):
    """(n, ms) of `jog ACTUATOR [N] MS`, each checked; CliError (usage, exit
    1) when one is missing, extra, not a whole number or out of range.
    The plate has no number; a lane or a lifter must be named: nothing is
    assumed, so a wrong call moves nothing."""
    numbered = actuator != "plate"
    want = 2 if numbered else 1
    if len(words) != want:
        key = ("err.jog_numbered" if numbered else "err.jog_plate")
        raise CliError(EXIT_INPUT, t(key, actuator=actuator, given=len(words), max=JOG_MAX_MS))
    values = []
    for given, what in zip(words, ("n", "ms") if numbered else ("ms",)):
        try:
            values.append(int(given))
        except ValueError:
            raise CliError(EXIT_INPUT, t("err.jog_" + what, value=given, max=JOG_MAX_MS)) from None
    n, ms = values if numbered else (None, values[0])
    if n is not None and not 0 <= n <= 3:
        raise CliError(EXIT_INPUT, t("err.jog_n", value=n, max=JOG_MAX_MS))
    if not 1 <= ms <= JOG_MAX_MS:
        raise CliError(EXIT_INPUT, t("err.jog_ms", value=ms, max=JOG_MAX_MS))
    return n, ms


def cmd_jog(args):
    try:
        n, ms = jog_arguments(args.actuator, args.what)
    except CliError as e:
        e.usage = args.parser.format_usage()
        raise
    request = {"actuator": args.actuator, "ms": ms}
    if n is not None:
        request["n"] = n

    def run(link, session):
        # The session stays open until the controller says the jog ended:
        # its close would stop the motor (firmware/link/service.py).
        out = dict(ok=True, **request)
        out.update(jog_end(link, link.request("jog", session=session, **request), ms))
        emit(args, out, _human_jog)
        return 0 if out["end"] in ("time", "switch") else EXIT_REFUSED
    return _serviced(args, run)


def jog_end(link, answer, ms, timeout=None):
    """How the jog just started ended, from the controller's events: its
    `jog` event, then its `jogged` event or the `fault` that stopped it.
    {"ran_ms": the time it ran by the controller's clock, "end": "time",
    "switch", "closed" or "fault", "count": revolutions or tiles counted
    (None when a fault ended it), "fault": the fault's code and name}."""
    timeout = ms / 1000.0 + 10.0 if timeout is None else timeout
    start = link.wait_event(lambda e: e["ev"] == "jog", timeout)
    ev = link.wait_event(lambda e: e["ev"] in ("jogged", "fault") and e["t"] >= start["t"],
                         timeout)
    if ev["ev"] == "fault":
        return {"ran_ms": ev["t"] - start["t"], "end": "fault", "count": None,
                "fault": {"code": ev["code"], "name": ev["name"]}}
    return {"ran_ms": ev["ms"], "end": ev["end"], "count": ev["count"]}


def _human_jog(o):
    a = o["actuator"]
    part = t("part.plate") if a == "plate" else t("part.lane", n=o["n"]) if a == "lane" else \
        t("part.lifter", n=o["n"]) + t("jog.dir." + a)
    count = ""
    if o["count"] is not None and a == "plate":
        count = t("msg.jog_revs", n=o["count"])
    elif o["count"] is not None and a == "lane":
        count = t("msg.jog_tiles", n=o["count"])
    f = o.get("fault") or {}
    end = t("jog.end." + o["end"], switch=t("label.top" if a == "lift_up" else "label.bottom"),
            code=f.get("code"), name=fault_name(f["code"]) if f else "")
    console().print(t("msg.jog_ran", part=part, ms=o["ran_ms"], asked=o["ms"], count=count,
                      end=end), highlight=False)


def cmd_config(args):
    if args.action == "validate":          # on this PC, with the firmware's own checker
        if not args.file:
            raise CliError(EXIT_INPUT, t("err.config_validate_file"), usage=args.parser.format_usage())
        from engine_core.rulesets import SettingError
        from firmware.config import load
        try:
            cfg = load(args.file)
        except SettingError as e:          # the checker's facts, said in the chosen language
            emit(args, {"ok": False, "error": str(e), "facts": e.facts},
                 lambda o: console().print("[red]%s[/]"
                                           % escape(said(o["error"], o["facts"]))))
            return 1
        emit(args, {"ok": True, "ruleset": cfg.ruleset_name, "tile_sets": cfg.tile_sets},
             lambda o: console().print("[green]%s[/]%s%s" % (t("svc.valid"), t("punct.colon"), t(
                 "svc.valid.text", ruleset=o["ruleset"], sets=o["tile_sets"]))))
        return 0

    if args.action == "set":
        return _config_set(args)

    def run(link, _key):
        if not args.file:
            out = fields(link.request("config_get"))
            emit(args, out, lambda o: console().print("\n".join(o["keys"])))
            return 0
        head, _, leaf = args.file.partition(".")
        got = fields(link.request("config_get", key=head))
        if leaf:                           # timings.NAME, pins.NAME: as config set takes them
            value = config_leaf(got, leaf)
            if value is _MISSING:
                from host_tools.cli.hints import config_keys, did_you_mean
                near = did_you_mean(args.file, config_keys())
                raise CliError(EXIT_REFUSED, t("err.config_no_key", name=args.file)
                               + ("; " + near if near else ""))
            got = {"key": args.file, "value": value}
        emit(args, got, _human_config_value)
        return 0
    return on_table(args, run)


def config_leaf(answer, leaf):
    """One entry of a config section's answer (`value`: [[name, value]...])."""
    for name, value in answer["value"] if isinstance(answer["value"], list) else []:
        if name == leaf:
            return value
    return _MISSING


_MISSING = object()


def _config_set(args):
    if not args.file or args.value is None:
        raise CliError(EXIT_INPUT, t("err.config_set_args"), usage=args.parser.format_usage())
    try:
        value = json.loads(args.value)     # 4200, [1, 2], "fuzhou144"
    except ValueError:
        value = args.value                 # a bare word: a string
    from host_tools.cli.hints import unquoted_text
    if unquoted_text(args.file, value):    # the table would refuse it as "not a text"
        raise CliError(EXIT_INPUT, t("err.config_quote", key=args.file, value=args.value))

    def run(link, session):
        out = link.request("config_set", session=session, key=args.file, value=value)
        emit(args, {"key": out["key"], "value": out["value"], "restart": out["restart"]},
             lambda o: console().print(t("msg.config_written", name=o["key"],
                                         value=plain(o["value"])), highlight=False))
        return 0
    return _serviced(args, run)


def cmd_rfid(args):
    """rfid audit | learn: scan the walls in the lanes (every side), then
    compare with the ruleset, or learn the tag table from a reference set."""
    def run(link, session):
        link.request("rfid_scan", session=session)
        if args.json:
            done = link.wait_event(lambda e: e["ev"] == "scanned", timeout=30.0)
        else:
            with console().status(t("svc.rfid_reading")):
                done = link.wait_event(lambda e: e["ev"] == "scanned", timeout=30.0)
        if done["sides"] < 4:
            raise SystemExit("mjctl: %s" % t("err.scan_stopped", sides=done["sides"]))
        out = fields(link.request("rfid_" + args.action, session=session))
        if args.action == "audit" and not out["tags"]:
            # Empty lanes: nothing to compare, so no check failed
            # (docs/technician.md, rfid audit).
            out = {"empty": True, "tags": 0}
            emit(args, out, lambda o: console().print(t("audit.empty")))
            return 0
        emit(args, out, _human_audit if args.action == "audit" else _human_learn)
        if args.action == "audit":
            return 0 if not out["kinds"] and not out["unknown"] else 1
        return 0
    return _serviced(args, run)


def cmd_selftest(args):
    c = None if args.json else console()

    def show(r):
        if c is not None:
            figures = t("punct.comma").join("%s %s" % (word("selftest.fig", k), v)
                                            for k, v in r.items()
                                            if k not in ("item", "pass", "why"))
            kind, _, n = r["item"].partition(" ")
            c.print("%s %s  %s%s" % (
                pad(t("part." + kind, n=n), 9),
                "[green]%s[/]" % t("selftest.pass") if r["pass"] else
                "[red]%s[/]" % t("selftest.fail"), r["why"],
                t("punct.paren", text=figures) if figures else ""))

    def restoring(n, switch):
        print(t("msg.selftest_restore", n=n, switch=t("label." + switch)), file=sys.stderr,
              flush=True)

    def run(link, key):
        if c is None:
            items = selftest.run(link, key, restoring=restoring)
        else:
            # A line that says which item moves now, replaced by its result.
            with c.status("") as line:
                def starting(name, ms):
                    kind, _, n = name.partition(" ")
                    line.update(t("selftest.running", item=t("part." + kind, n=n), s=ms / 1000))
                items = selftest.run(link, key, progress=show, restoring=restoring,
                                     starting=starting)
        ok = all(r["pass"] for r in items)
        if args.json:
            emit(args, {"ok": ok, "items": items}, None)
        else:
            verdict = "[green]%s[/]" % t("selftest.all_pass") if ok else "[red]%s[/]" % t(
                "selftest.n_fail", n=sum(not r["pass"] for r in items), of=len(items))
            c.print("%s%s%s" % (t("selftest.name"), t("punct.colon"), verdict))
        return 0 if ok else 1
    _need_key(args)
    return on_table(args, run)


def cmd_dice_test(args):
    per_request = 500                      # the controller's bound per request
    if not 1 <= args.n <= DICE_TEST_MAX:
        raise CliError(EXIT_INPUT, t("err.dice_n", n=args.n, max=DICE_TEST_MAX),
                       usage=args.parser.format_usage())

    def run(link, session):
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
                got = link.request("dice_test", session=session, n=n)["counts"]
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
        emit(args, out, _human_dice)
        return 0 if out["fair"] else 1
    return _serviced(args, run)


def cmd_new_game(args):
    """A new game (docs/hand.md, A new game): the controller draws the
    first dealer again and the streak starts from 0; refused (`busy`)
    during a hand, a cut one included."""
    def run(link, session):
        emit(args, fields(link.request("new_game", session=session)),
             lambda o: console().print(t("msg.new_game", seat=o["dealer"])))
        return 0
    return _serviced(args, run)


# -- output ------------------------------------------------------------------

def _human_config_value(o):
    c = console()
    v = o["value"]
    if isinstance(v, list) and v and all(isinstance(e, list) and len(e) == 2
                                         and isinstance(e[0], str) for e in v):
        for name, value in v:              # a section: one line per entry
            c.print("%s.%s = %s" % (o["key"], name, plain(value)), highlight=False)
    else:
        c.print("%s = %s" % (o["key"], plain(v)), highlight=False)


def _human_audit(o):
    c = console()
    c.print(t("audit.text", tags=o["tags"], unknown=o["unknown"], kinds=o["kinds"]))
    for code, have, want in o["tiles"]:
        c.print("  %-3s %s  [red]%s[/]" % (code, t("audit.have", have=have, want=want),
                                          t("audit.missing") if have < want else t("audit.extra")))
    if o["kinds"] > len(o["tiles"]):
        c.print("  " + t("audit.more", n=o["kinds"] - len(o["tiles"])))
    c.print("[green]%s[/]" % t("audit.match") if not o["kinds"] and not o["unknown"]
            else "[red]%s[/]" % t("audit.no_match"))


def _human_learn(o):
    console().print(t("learn.text", tags=o["tags"], new=o["new"], changed=o["changed"]))


def _human_dice(o):
    from rich.table import Table
    table = Table(title=t("dice.title", n=o["rolls"]))
    for face in range(1, 7):
        table.add_column(str(face), justify="right")
    table.add_row(*[str(n) for n in o["faces"]])
    c = console()
    c.print(table)
    c.print(t("dice.chi2", chi2=o["chi2"], p=o["p"], verdict="[green]%s[/]" % t("dice.fair")
              if o["fair"] else "[red]%s[/]" % t("dice.biased")))


# -- the commands' arguments -------------------------------------------------

def add_new_game(sub):
    command(sub, "new-game", cmd_new_game, t("help.new_game"), False,
            "mjctl --port /dev/ttyACM0 --key keys/table-7.key new-game")


def add_dice_test(sub):
    p = command(sub, "dice-test", cmd_dice_test, t("help.dice_test"), False,
                "mjctl --port /dev/ttyACM0 --key keys/table-7.key dice-test 6000")
    p.add_argument("n", type=int, help=t("help.arg_rolls", max=DICE_TEST_MAX))


def add_config(sub):
    p = command(sub, "config", cmd_config, t("help.config"), False,
                "mjctl --port /dev/ttyACM0 config get timings.lift_up_ms\n"
                "  mjctl --port /dev/ttyACM0 --key keys/table-7.key config set timings.lift_up_ms 4200\n"
                "  mjctl config validate firmware/config.json")
    p.add_argument("action", choices=["get", "set", "validate"])
    p.add_argument("file", nargs="?", metavar="KEY|FILE")
    p.add_argument("value", nargs="?", metavar="VALUE", help=t("help.arg_config_value"))


def add_rfid(sub):
    p = command(sub, "rfid", cmd_rfid, t("help.rfid"), False,
                "mjctl --port /dev/ttyACM0 --key keys/table-7.key rfid audit")
    p.add_argument("action", choices=["audit", "learn"])


def add_selftest(sub):
    command(sub, "selftest", cmd_selftest, t("help.selftest"), False,
            "mjctl --port /dev/ttyACM0 --key keys/table-7.key selftest")


def add_jog(sub):
    p = command(sub, "jog", cmd_jog, t("help.jog", max=JOG_MAX_MS), False,
                "mjctl --port /dev/ttyACM0 --key keys/table-7.key jog lane 1 500\n"
                "  mjctl --port /dev/ttyACM0 --key keys/table-7.key jog plate 1000\n"
                "  mjctl --port /dev/ttyACM0 --key keys/table-7.key jog lift_up 2 1500",
                usage="mjctl jog [-h] [--json] {plate MS | lane N MS | lift_up N MS | lift_down N MS}")
    p.add_argument("actuator", choices=["plate", "lane", "lift_up", "lift_down"])
    p.add_argument("what", nargs="*", metavar="[N] MS", help=t("help.arg_jog", max=JOG_MAX_MS))
