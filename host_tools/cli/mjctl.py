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
from host_tools.cli import fleet, play, service


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
    for add in (play.add_cycle, play.add_hand, play.add_serve, add_status, play.add_clear,
                play.add_start, play.add_new_game, service.add_log, service.add_sensors, service.add_live,
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
