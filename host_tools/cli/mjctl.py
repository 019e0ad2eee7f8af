"""mjctl: the technician's and test engineer's command line.

    mjctl --sim [--seed N] [--heap BYTES] [--fault NAME[:ARG]]... cycle --json
    mjctl --sim [--seed N] [--heap BYTES] hand --json     (plays one with virtual players)
    mjctl --port DEV hand | log [--json]; --key FILE jog plate|lane [N] MS
    mjctl --sim serve --json
    mjctl --port DEV status [--json]
    mjctl fleet; mjctl --sim --tables N fleet --seconds S --json

`--sim` starts the real firmware on the virtual table (host_tools/sim),
frozen into the 32-bit twin as a board runs it (`--form mpy` or `source`
for the development forms); `--port` talks to a controller, real or
virtual, over its link.

The command line only: what a command does on a table is in
host_tools/cli/ops.py (a cycle, a hand) and service.py (the service
commands), what the commands share in common.py.
"""

import argparse
import json
import signal
import sys
import threading

from firmware.link.codec import LinkError
from host_tools.image.espkit import Missing
from host_tools.image.mpenv import MissingBuild
from host_tools.link import mux as linkmux
from host_tools.link.client import LinkClient
from host_tools.texts import word
from host_tools.cli.common import (EXIT_INPUT, EXIT_INTERRUPTED, EXIT_NO_ANSWER, EXIT_REFUSED,
                                   CliError, Parser, command, console, emit, fields, human_fault,
                                   lift_text, plain, seconds, state_text, t, virtual_table)
from host_tools.cli.ops import describe_fault, run_cycle, run_hand
from host_tools.cli import fleet, service


def _on_sim(args, run, human, seated=None):
    """run(sim, link) on a fresh virtual table, its JSON object emitted;
    a link that fails is the object's error, with the firmware's log.
    `seated(table)`: what sits at the table before the firmware starts."""
    with virtual_table(args) as sim:
        extra = seated(sim.table) if seated is not None else None
        with LinkClient(sim.link_path) as link:
            try:
                out = run(sim, link, extra)
            except LinkError as e:
                out = {"ok": False, "error": str(e), "faults": [],
                       "firmware_log": sim.firmware_log()[-2000:]}
    emit(args, out, human)
    return 0 if out.get("ok") else 1


def cmd_hand(args):
    if not args.sim:                      # a real table: the hand as it stands
        from host_tools.cli.service import cmd_current_hand
        return cmd_current_hand(args)
    from host_tools.sim.hand_players import HandPlayers

    cut = getattr(args, "power_cut", None)
    if cut is not None and not 0 <= cut <= 3600:
        raise CliError(EXIT_INPUT, t("err.power_cut", s=cut))

    def run(sim, link, players):
        if not args.json:
            print(t("msg.sim_hand_start", seed=args.seed), flush=True)
        return run_hand(sim, link, players)
    return _on_sim(args, run, human_hand, lambda table: HandPlayers(
        table, seed=args.seed, cut_after_ms=None if cut is None else int(cut * 1000),
        off_take=getattr(args, "take_while_off", False)))


def cmd_cycle(args):
    return _on_sim(args, lambda sim, link, _: run_cycle(sim, link), human_cycle)


def cmd_serve(args):
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    key, shown = True, None
    if args.key:       # practice with a key file of one's own: made when missing
        from host_tools.image import tablekey
        try:
            key, made = tablekey.read_or_make(args.key)
        except tablekey.KeyFileError as e:
            print("mjctl: %s" % e, file=sys.stderr)
            return 1
        shown = {"file": args.key, "fingerprint": tablekey.fingerprint(key), "made": made}
    with virtual_table(args, realtime=True, key=key) as sim:
        if args.json:
            print(json.dumps({"link": sim.link_path, "key": shown}), flush=True)
        else:
            if shown:
                from host_tools.texts import t
                print(t("sim.key", file=shown["file"], fp=shown["fingerprint"],
                        made=t("sim.key_made") if shown["made"] else ""))
            print("virtual table running; link on %s (Ctrl-C stops)" % sim.link_path, flush=True)
        while not done.wait(0.2):
            if not sim.alive:
                print("the virtual table stopped: %s" % sim.exit_reason, file=sys.stderr)
                return 1
    return 0


def cmd_status(args):
    if args.sim:
        with virtual_table(args) as sim:
            with LinkClient(sim.link_path) as link:
                return _status(args, link)
    with LinkClient(linkmux.shared(args.port)) as link:
        return _status(args, link)


def _status(args, link):
    info = link.hello()
    st = link.request("status")
    out = {"firmware": info.get("fw"), "proto": info.get("proto"), "build": info.get("build"),
           "runtime": info.get("runtime")}
    out.update(fields(st))
    if out.get("fault"):
        out["fault"] = describe_fault(out["fault"])
    try:
        out["counters"] = fields(link.request("counters"))
    except LinkError:              # stopped at boot (config, firmware): status only
        pass
    emit(args, out, human_status)
    return 0


# -- output ------------------------------------------------------------------

def human_cycle(out):
    c = console()
    if out.get("ok"):
        c.print("[green]%s[/]%s%s" % (t("mj.cycle_done"), t("punct.colon"), t(
            "mj.cycle_done.text", walls=out["walls"]["tiles_per_side"], dice=out["dice"],
            dealer=out["dealer"])))
        c.print(t("mj.cycle_time", s=out["table_time_s"], bound=out["lower_bound_s"],
                  over=100.0 * (out["table_time_s"] / out["lower_bound_s"] - 1)))
    else:
        c.print("[red]%s[/]" % t("mj.cycle_stopped"))
    for f in out.get("faults", []):
        human_fault(c, f)
    if out.get("error"):
        c.print("[red]%s[/]" % out["error"])


def human_hand(out):
    c = console()
    res = out.get("result")
    if res is None:
        c.print("[red]%s[/]" % t("mj.hand_stopped"))
    elif res["draw"]:
        c.print("[yellow]%s[/]%s%s" % (t("mj.hand_draw"), t("punct.semicolon"),
                                       t("mj.dealer_stays", seat=res["dealer"])))
    else:
        c.print("[green]%s[/]%s%s" % (t("hand.won", seat=res["winner"]), t("punct.semicolon"), t(
            "mj.next_dealer", seat=res["dealer"], streak=res["streak"])))
    ops = {}
    for st in out.get("observed", []):
        ops[st["op"]] = ops.get(st["op"], 0) + 1
    c.print(t("mj.events_followed", ops=t("punct.comma").join(
        "%s %d" % (word("op", op), n) for op, n in sorted(ops.items()))))
    if out.get("resumed") is not None:
        c.print(t("mj.resumed") if out["resumed"] else
                t("mj.fell_back", reason=out.get("fallback"), why=word("resume", out.get("fallback"))))
        if out["resumed"]:
            c.print(t("mj.replay_ok") if out.get("replay_ok") else
                    "[red]%s[/]" % t("mj.replay_differs", n=len(out.get("mismatches", []))))
    if out.get("observed"):
        last = out["observed"][-1]
        c.print(t("mj.last_state", phase=word("phase", last["phase"]), wall=last["wall"],
                  reserve=last["reserve"], drawable=last["drawable"], gold=last["gold"]))
    for f in out.get("faults", []):
        human_fault(c, f)
    if out.get("error"):
        c.print("[red]%s[/]" % out["error"])


def human_status(out):
    from rich.table import Table
    c = console()
    tb = Table(show_header=False, box=None)
    dice = out.get("dice")
    rows = [("label.state", state_text(out.get("state"))),
            ("label.phase", word("build", out["phase"]) if out.get("phase") else "-"),
            ("label.cycles", plain(out.get("cycles"))),
            ("label.dealer", t("msg.seat", n=out["dealer"]) if out.get("dealer") is not None
             else "-"),
            ("label.dice", "%d + %d" % tuple(dice) if dice else "-"),
            ("label.walls", plain(out.get("tiles_per_side"))),
            ("label.lanes", plain(out.get("lanes"))),
            ("label.lifters", ", ".join(lift_text(s) for s in out.get("lifters") or []) or "-"),
            ("label.uptime", seconds(out["uptime"]) if out.get("uptime") is not None else "-"),
            ("label.firmware", plain(out.get("firmware"))),
            ("label.proto", plain(out.get("proto"))),
            ("label.build", plain(out.get("build")))]
    for key, value in rows:
        tb.add_row(t(key), value)
    rt = out.get("runtime")
    if rt:
        where = rt.get("chip") or rt.get("port") or "-"     # ESP32S3, or the twin's unix port
        tb.add_row(t("label.runtime"), t("msg.runtime", mp=rt["micropython"] or "-", where=where,
                                         bits=rt["bits"], form=t("label.frozen") if rt["frozen"]
                                         else t("label.files")))
    heap = out.get("heap")
    if heap:
        tb.add_row(t("label.heap"), t("msg.heap", free=heap["free"], used=heap["alloc"]))
    c_ = out.get("counters")
    if c_:
        faults = ", ".join("%d x%d" % (code, n) for code, n in c_["faults"]) or t("label.none")
        tb.add_row(t("label.counters"), t("msg.status_counters", hands=c_["hands"],
                                          lifts=c_["lifts"], fed=plain(c_["tiles_fed"]),
                                          faults=faults))
    c.print(tb, highlight=False)
    if out.get("fault"):
        human_fault(c, out["fault"])


# -- arguments ---------------------------------------------------------------



def add_cycle(sub):
    command(sub, "cycle", cmd_cycle, t("help.cycle"), True, "mjctl --sim --seed 3 cycle")


def add_hand(sub):
    p = command(sub, "hand", cmd_hand, t("help.hand"), False, "mjctl --port /dev/ttyACM0 hand\n"
                "  mjctl --sim --seed 4 hand\n  mjctl --sim --seed 4 hand --json --power-cut 60")
    p.add_argument("--power-cut", type=float, default=None, metavar="S",
                   help=t("help.opt_power_cut"))
    p.add_argument("--take-while-off", action="store_true", help=t("help.opt_take_while_off"))


def add_serve(sub):
    p = command(sub, "serve", cmd_serve, t("help.serve"), True,
                "mjctl --sim serve --key keys/practice.key")
    # `mjctl --sim serve --key FILE` as well as `mjctl --sim --key FILE serve`
    # (SUPPRESS: absent here, the global --key stays).
    p.add_argument("--key", metavar="FILE", default=argparse.SUPPRESS,
                   help=t("help.opt_serve_key"))


def add_status(sub):
    command(sub, "status", cmd_status, t("help.status"), False, "mjctl --port /dev/ttyACM0 status")


def version_text():
    from importlib.metadata import PackageNotFoundError, version
    from firmware.link.codec import PROTO_VERSION
    try:
        v = version("mahjong-table")
    except PackageNotFoundError:          # run from a tree that was not installed
        v = "0.1.0"
    return t("msg.version", version=v, proto=PROTO_VERSION)


def parser():
    ap = Parser(prog="mjctl", description=t("help.mjctl"), epilog=t("help.mjctl_epilog"),
                formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=version_text())
    ap.add_argument("--lang", choices=("en", "zh"),
                    help=t("help.opt_lang"))
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--sim", action="store_true", help="run the firmware on the virtual table")
    where.add_argument("--qemu", action="store_true",
                       help="as --sim, the board's image on the esp32 port in QEMU (make qemu)")
    where.add_argument("--port", metavar="DEV", help=t("help.opt_port"))
    ap.add_argument("--seed", type=int, default=0, help="virtual table seed (--sim)")
    ap.add_argument("--heap", type=int, metavar="BYTES", help="MicroPython heap size (--sim)")
    ap.add_argument("--form", choices=("image", "mpy", "source"), default="image",
                    help="how the firmware runs (--sim): frozen into the 32-bit twin as a"
                    " board ships it (image, the default), or for development its .mpy files"
                    " (make mpy) or .py sources on the unfrozen 32-bit build")
    ap.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG]",
                    help="inject a virtual table fault (--sim), repeatable")
    ap.add_argument("--tables", type=int, metavar="N", help=t("help.opt_tables"))
    ap.add_argument("--key", metavar="FILE",
                    help="the table's service key file: for service commands; with --sim,"
                    " the virtual table's key")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # Each group adds its own commands; --help lists them in this order.
    for add in (add_cycle, add_hand, add_serve, add_status, service.add_clear, service.add_start,
                service.add_new_game, service.add_log, service.add_sensors, service.add_live,
                service.add_monitor, service.add_ports, service.add_counters,
                service.add_dice_test, service.add_config, service.add_rfid,
                service.add_selftest, service.add_jog, fleet.add_fleet):
        add(sub)
    return ap


def _pre_lang(argv):
    """--lang as given, before the parser (whose help is in that language)
    exists; None: from the locale."""
    for i, a in enumerate(argv):
        if a == "--lang" and i + 1 < len(argv):
            return argv[i + 1] if argv[i + 1] in ("en", "zh") else None
        if a.startswith("--lang="):
            v = a.split("=", 1)[1]
            return v if v in ("en", "zh") else None
    return None


def resolve_port(args):
    """args.port from --port, else MJCTL_PORT; `auto`: the one port whose
    device answers as a controller."""
    import os
    if not args.sim and not args.port:
        args.port = os.environ.get("MJCTL_PORT") or None
    need = args.need_link if args.command != "config" else args.action != "validate"
    if args.sim or not need:
        return
    if not args.port:
        raise CliError(EXIT_INPUT, t("err.no_port_given"), usage=args.parser.format_usage())
    if args.port == "auto":
        from host_tools.cli.ports import find_controllers
        found = [p for p in find_controllers() if p["controller"]]
        if not found:
            raise CliError(EXIT_NO_ANSWER, t("err.auto_none"))
        if len(found) > 1:
            raise CliError(EXIT_INPUT, t("err.auto_several",
                                         ports=", ".join(p["device"] for p in found)))
        args.port = found[0]["device"]


def _interrupt_once():
    """Ctrl-C raises KeyboardInterrupt once; later ones while the command
    stops what it started (motors, the session, a lifter) are ignored, so
    that the clean-up runs to its end."""
    state = {"n": 0}

    def handler(signum, frame):
        state["n"] += 1
        if state["n"] == 1:
            raise KeyboardInterrupt
    signal.signal(signal.SIGINT, handler)


def link_error(e, port):
    """(exit code, line) for a LinkError: the table's refusals with their
    reason and what to do, no answer, a failed link."""
    if e.code == "timeout":
        return EXIT_NO_ANSWER, t("err.no_answer", port=port)
    if e.code == "closed":
        return EXIT_NO_ANSWER, t("err.link_failed", port=port, reason=e.message)
    from host_tools.texts import LANGS, lang
    hint = LANGS[lang()].TEXTS.get("hint." + e.code)
    return EXIT_REFUSED, "%s: %s%s" % (e.code, e.message, "; " + hint if hint else "")


def serial_error(e, port):
    """(exit code, line) for a port that cannot be opened."""
    import errno
    no = getattr(e, "errno", None)
    text = str(e)
    if no == errno.ENOENT or "No such file" in text:
        return EXIT_INPUT, t("err.port_missing", port=port)
    if no == errno.EACCES or "Permission denied" in text:
        return EXIT_INPUT, t("err.port_denied", port=port)
    return EXIT_INPUT, t("err.port_bad", port=port, reason=text)


def main(argv=None):
    import serial
    from host_tools import texts
    argv = sys.argv[1:] if argv is None else list(argv)
    texts.set_lang(_pre_lang(argv))
    ap = parser()
    args = ap.parse_args(argv)
    texts.set_lang(args.lang)
    if args.qemu:
        if args.heap or args.form != "image" or args.command == "fleet":
            ap.error("--qemu runs the board's image as it is: no --heap, --form or fleet")
        args.sim = True
    if args.need_sim and not args.sim:
        ap.error(t("err.needs_sim", command=args.command))
    if not args.sim and (args.fault or args.heap or args.form != "image"):
        ap.error(t("err.sim_only"))
    if args.tables is not None and not (args.sim and args.command == "fleet"):
        ap.error(t("err.tables_sim_only"))
    if threading.current_thread() is threading.main_thread():
        _interrupt_once()
    port = None
    try:
        resolve_port(args)
        port = args.port
        return args.fn(args)
    except KeyboardInterrupt:
        print("mjctl: %s" % t("err.interrupted"), file=sys.stderr)
        return EXIT_INTERRUPTED
    except CliError as e:
        if e.usage:
            sys.stderr.write(e.usage)
        print("mjctl: %s" % e, file=sys.stderr)
        return e.code
    except LinkError as e:
        code, line = link_error(e, port)
        print("mjctl: %s" % line, file=sys.stderr)
        return code
    except serial.SerialException as e:
        code, line = serial_error(e, port)
        print("mjctl: %s" % line, file=sys.stderr)
        return code
    except (ValueError, MissingBuild, Missing) as e:   # a bad --fault text; no twin, image or QEMU
        print("mjctl: %s" % e, file=sys.stderr)
        return EXIT_INPUT
    except BrokenPipeError:                   # piped into `head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
