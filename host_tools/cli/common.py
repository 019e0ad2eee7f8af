"""What every mjctl command shares: exit codes, the error a command
stops with, its parser and output (JSON or words), values as a technician
reads them, and the table it talks to (a port or the virtual table, with
the key file given)."""

import argparse
import json
import sys
from pathlib import Path

from rich.markup import escape

from host_tools import texts
from host_tools.texts import LANGS, fault_texts, lang, pad, reason_texts, t, word
from firmware.faults import POWER_LOST
from host_tools.link.client import LinkClient

EXIT_INPUT = 1         # a wrong call or input (also: a check that failed)
EXIT_REFUSED = 2       # the table refused, or stopped the command
EXIT_NO_ANSWER = 3     # no answer: no controller on the port, or the link failed
EXIT_INTERRUPTED = 130  # Ctrl-C: what the command started is stopped first

KEY_BYTES = 32                 # a table's service key (host_tools/image/deploy.py makes them)


class CliError(Exception):
    """One line for stderr and the exit code; `usage`: the command's usage
    goes first (a wrong call)."""

    def __init__(self, code, message, usage=None):
        Exception.__init__(self, message)
        self.code = code
        self.usage = usage


class Parser(argparse.ArgumentParser):
    """argparse whose wrong calls exit 1 (the documented code), with one
    line that says what to do; `options`: its option strings and their
    actions (mjctl.globals_first reads them)."""

    def __init__(self, *args, **kw):
        self.options = {}
        argparse.ArgumentParser.__init__(self, *args, **kw)

    def add_argument(self, *args, **kw):
        action = argparse.ArgumentParser.add_argument(self, *args, **kw)
        self.options.update((o, action) for o in action.option_strings)
        return action

    def error(self, message):
        self.print_usage(sys.stderr)
        print("mjctl: %s" % t("err.usage", problem=message, prog=self.prog), file=sys.stderr)
        near = self.near_choice(message)
        if near:
            print("mjctl: %s" % near, file=sys.stderr)
        sys.exit(EXIT_INPUT)

    @staticmethod
    def near_choice(message):
        """'did you mean X?' for argparse's "invalid choice: 'W' (choose
        from 'A', 'B')" (a mistyped command, action or actuator), or None."""
        import re
        from host_tools.cli.hints import did_you_mean
        m = re.search(r"(?:invalid choice: |无效的选择：)'([^']*)' ?[(（](?:choose from |可选：)(.*)[)）]",
                      message)
        return m and did_you_mean(m.group(1), re.findall(r"'([^']*)'", m.group(2)))


def command(sub, name, fn, text, need_sim, example=None, description=None, link=True,
            usage=None):
    """A subcommand with its --json; returns its parser for more arguments.
    `example`: the line shown under --help; `link`: it talks to a table."""
    epilog = t("help.example", example=example) if example else None
    p = sub.add_parser(name, help=text, description=description or text, epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter, usage=usage)
    p.add_argument("--json", action="store_true", help=t("help.opt_json"))
    p.set_defaults(fn=fn, need_sim=need_sim, need_link=link, parser=p)
    return p


def sim_key(args):
    """The virtual table's service key: --key FILE's bytes, else random."""
    if getattr(args, "key", None):
        return Path(args.key).read_bytes()
    return True


def read_key(path):
    """The bytes of a key file, or CliError with what is wrong with it."""
    p = Path(path)
    try:
        key = p.read_bytes()
    except FileNotFoundError:
        raise CliError(EXIT_INPUT, t("err.key_missing", path=path)) from None
    except IsADirectoryError:
        raise CliError(EXIT_INPUT, t("err.key_folder", path=path)) from None
    except PermissionError:
        raise CliError(EXIT_INPUT, t("err.key_unreadable", path=path)) from None
    except OSError as e:
        raise CliError(EXIT_INPUT, t("err.key_bad", path=path, reason=e.strerror or e)) from None
    if len(key) != KEY_BYTES:
        raise CliError(EXIT_INPUT, t("err.key_size", path=path, n=len(key), want=KEY_BYTES))
    return key


def on_table(args, fn):
    """fn(link, key) on the chosen controller; the key from --key, or the
    virtual table's own under --sim."""
    if args.sim:
        with virtual_table(args, key=sim_key(args)) as sim:
            with LinkClient(sim.link_path) as link:
                link.hello()
                return fn(link, sim.key)
    key = read_key(args.key) if getattr(args, "key", None) else None
    from host_tools.link import mux as linkmux
    with LinkClient(linkmux.shared(args.port)) as link:   # shared with other windows
        link.hello()
        return fn(link, key)


def answer(args, op, human):
    """One request; its answer printed (--json: as JSON, else by `human`)."""
    def run(link, _key):
        emit(args, fields(link.request(op)), human)
        return 0
    return on_table(args, run)


def fields(answer):
    """An answer's own fields: without the envelope's `ok` and `op`."""
    return {k: answer[k] for k in answer if k not in ("ok", "op")}


def emit(args, obj, human):
    if args.json:
        print(json.dumps(obj))
    else:
        human(obj)


def console():
    from rich.console import Console
    return Console()


def plain(v):
    """A value as a technician reads it: no Python reprs (None, lists)."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return t("label.yes") if v else t("label.no")
    if isinstance(v, (list, tuple)):
        return " ".join(plain(e) for e in v) if v else "-"
    if isinstance(v, dict):            # a fault's detail: its fields in words
        return t("punct.comma").join("%s %s" % (word("detail", k), word("reason", v[k])
                                               if k == "reason" else plain(v[k])) for k in v)
    return str(v)


def lift_text(state):
    return LANGS[lang()].TEXTS.get("lift." + state, state)


def state_text(state):
    return LANGS[lang()].TEXTS.get("state." + state, state)


def fault_name(code):
    return fault_texts(code)[0]


def seconds(ms):
    """A controller time (ms) as a technician reads it, with its unit."""
    s = ms / 1000.0
    if s < 120:
        return t("unit.s", v="%.1f" % s)
    if s < 7200:
        return t("unit.min_s", m=int(s // 60), s=int(s % 60))
    return t("unit.h_min", h=int(s // 3600), m=int(s % 3600 // 60))


def human_fault(c, f):
    name, cause, fix = fault_texts(f["code"])
    reason = f["detail"].get("reason") if f["code"] == POWER_LOST and f["detail"] else None
    if reason is not None:
        # What the reason says of this cut, and what to do when it is one
        # the technician's clear resumes (a lift, a build).
        why, what = reason_texts(reason)
        if why is not None:
            cause = "%s %s" % (cause, why)
        if what is not None:
            fix = what
    detail = f["detail"]
    if detail and "why" in detail:     # a boot fault's reason (a config's), in words
        from host_tools.texts.refusal import said
        detail = said(detail.get("reason", ""), detail)
    elif detail:
        detail = plain(detail)
    c.print("[bold red]%s[/] %s" % (t("fault.head", code=f["code"], name=name),
                                    escape(detail or "")), highlight=False)
    for label, text in ((t("fault.cause"), cause), (t("fault.fix"), fix)):
        for line in hanging("  %s " % pad(label + t("punct.colon").rstrip(), 6), text, c.width):
            c.print(line, markup=False, highlight=False)


_CLOSING = "，。；：）、！？」』"


def hanging(head, text, width):
    """`head` then `text` wrapped to `width` terminal cells, every line
    after the first indented under the text's start (not at column 0):
    English breaks at spaces, Chinese between any two characters but
    before a closing mark (，。；：）、), which stays at its line's end."""
    from rich.cells import cell_len, chop_cells
    indent = cell_len(head)
    room = max(20, width - indent - 1)
    if texts.CJK.search(text):
        parts = chop_cells(text, room - 2)        # room for a mark pulled back
        for i in range(1, len(parts)):
            while parts[i] and parts[i][0] in _CLOSING:
                parts[i - 1] += parts[i][0]
                parts[i] = parts[i][1:]
        parts = [p for p in parts if p] or [""]
    else:
        import textwrap
        parts = textwrap.wrap(text, room) or [""]
    return [head + parts[0]] + [" " * indent + p for p in parts[1:]]


def virtual_table(args, **kw):
    """The table `--sim` or `--qemu` asks for, not started: the firmware
    frozen into the twin (SimTable), or the board's image on the esp32 port
    in QEMU (QemuTable: `make qemu` builds it)."""
    if getattr(args, "qemu", False):
        from host_tools.sim.qemu import QemuTable
        return QemuTable(seed=args.seed, faults=args.fault, **kw)
    from host_tools.sim.launcher import SimTable
    return SimTable(seed=args.seed, faults=args.fault, heap=args.heap, form=args.form, **kw)
