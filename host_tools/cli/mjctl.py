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

The command line only: its options, the order --help lists the commands
in, and the exit code of each way a command stops. The commands are in a
module per group (host_tools/cli/__init__.py lists them), what they do on a
table in ops.py (a cycle, a hand), what they share in common.py.
"""

import argparse
import re
import signal
import sys
import threading

from firmware.link.codec import LinkError
from host_tools.image.espkit import Missing
from host_tools.image.mpenv import MissingBuild
from host_tools.cli.common import (EXIT_INPUT, EXIT_INTERRUPTED, EXIT_NO_ANSWER, EXIT_REFUSED,
                                   CliError, Parser, t)
from host_tools.cli import fleet, logs, play, ports, refusals, service, watch


def version_text():
    from importlib.metadata import PackageNotFoundError, version
    from firmware.link.protocol import PROTO_VERSION
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
    # The group's options go into ap.options too (Parser records its own).
    for action in (
            where.add_argument("--sim", action="store_true",
                               help="run the firmware on the virtual table"),
            where.add_argument("--qemu", action="store_true", help="as --sim, the board's"
                               " image on the esp32 port in QEMU (make qemu)"),
            where.add_argument("--port", metavar="DEV", help=t("help.opt_port"))):
        ap.options.update((o, action) for o in action.option_strings)
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
    ap.commands = sub.choices             # each command's parser, by name (globals_first)
    # Each group adds its own commands; --help lists them in this order.
    for add in (play.add_cycle, play.add_hand, play.add_serve, watch.add_status, play.add_clear,
                play.add_start, logs.add_log, watch.add_sensors,
                watch.add_live, watch.add_monitor, ports.add_ports, logs.add_counters,
                service.add_dice_test, service.add_new_game, service.add_config, service.add_rfid,
                service.add_selftest, service.add_jog, fleet.add_fleet):
        add(sub)
    return ap


def globals_first(ap, argv):
    """argv with mjctl's own options written after the command moved before
    it (`jog lane 1 500 --key K` as `--key K jog lane 1 500`), as a
    technician types them: an option the command itself takes stays (serve's
    --key), and everything after `--` is left as it is."""
    commands = ap.commands
    own = ap.options
    out, i, at = [], 0, None
    while i < len(argv):
        a = argv[i]
        if a == "--":
            out += argv[i:]
            break
        name = a.split("=", 1)[0]
        if at is None and a in commands and (not out or out[-1] not in own or
                                            own[out[-1]].nargs == 0):
            at = len(out)
            cmd = commands[a].options
        elif at is not None and name in own and name not in cmd:
            takes = own[name].nargs != 0 and "=" not in a
            moved = argv[i:i + 1 + takes]
            out[at:at] = moved
            at += len(moved)
            i += len(moved)
            continue
        out.append(a)
        i += 1
    return out


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
    """args.port from --port, else MJCTL_PORT, else the one port of this
    PC whose device answers as a controller (pyserial's list, as mpremote
    finds a board), said on stderr; `auto` asks for that search."""
    import os
    if not args.sim and not args.port:
        args.port = os.environ.get("MJCTL_PORT") or None
    need = args.need_link if args.command != "config" else args.action != "validate"
    if args.sim or not need:
        return
    given = args.port == "auto"
    if args.port and not given:
        return
    found = [p for p in ports.find_controllers() if p["controller"]]
    if not found:
        if given:
            raise CliError(EXIT_NO_ANSWER, t("err.auto_none"))
        raise CliError(EXIT_INPUT, t("err.no_port_given"), usage=args.parser.format_usage())
    if len(found) > 1:
        raise CliError(EXIT_INPUT, t("err.auto_several",
                                     ports=", ".join(p["device"] for p in found)))
    args.port = found[0]["device"]
    print("mjctl: %s" % t("msg.port_found", port=args.port, table=found[0]["table"]),
          file=sys.stderr, flush=True)


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


def link_error(e, port, command=None):
    """(exit code, line) for a LinkError: the table's refusals with their
    reason and the next step that works, no answer, a failed link."""
    if e.code == "timeout":
        return EXIT_NO_ANSWER, t("err.no_answer", port=port)
    if e.code == "closed":
        m = re.search(r"\[Errno (\d+)\]", e.message)
        return EXIT_NO_ANSWER, t("err.link_failed", port=port,
                                 reason=os_reason(int(m.group(1)) if m else None, e.message))
    return EXIT_REFUSED, refusals.line(e, command)


def serial_error(e, port):
    """(exit code, line) for a port that cannot be opened."""
    import errno
    no = getattr(e, "errno", None)
    text = str(e)
    if no == errno.ENOENT or "No such file" in text:
        return EXIT_INPUT, t("err.port_missing", port=port)
    if no == errno.EACCES or "Permission denied" in text:
        return EXIT_INPUT, t("err.port_denied", port=port)
    return EXIT_INPUT, t("err.port_bad", port=port, reason=os_reason(no, text))


def os_reason(no, text):
    """What the system or pyserial said of a port, in the chosen language
    when it is one a technician meets (a port busy, a cable pulled), else
    as it came."""
    import errno
    name = errno.errorcode.get(no) if no is not None else None
    if name in ("EBUSY", "EIO", "ENXIO", "ENODEV", "EPERM"):
        return t("oserr." + name)
    if "device disconnected" in text or "returned no data" in text:
        return t("oserr.ENXIO")       # pyserial's words for a port gone while read
    return text


def main(argv=None):
    import serial
    from host_tools import texts
    argv = sys.argv[1:] if argv is None else list(argv)
    texts.set_lang(_pre_lang(argv))
    ap = parser()
    args = ap.parse_args(globals_first(ap, argv))
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
        code, line = link_error(e, port, args.command)
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
