"""`mjctl fleet`: the parlour page in the terminal (docs/fleet.md).

    mjctl fleet [--seconds S] [--json]          the running `make fleet`'s broker
    mjctl fleet --broker HOST:PORT --user-file F  a parlour's broker, F a JSON
                                                  {"user": ..., "password": ...}
    mjctl --sim --tables N fleet --seconds S --json

Without --sim it subscribes to the broker with the dashboard's read-only
user and shows every table live until Ctrl-C (or for S wall seconds;
--json: the view after them, one JSON object). With --sim it runs N
virtual tables with the project's broker for S virtual seconds, as fast
as they go, and prints the broker's version and port, each table's id,
online, state, hands and faults by code, and the messages seen.
"""

import json
import time

from host_tools.cli.common import EXIT_INPUT, EXIT_NO_ANSWER, CliError, command, console, t
from host_tools.texts import fault_texts, word

SIM_TIMEOUT_S = 600        # wall seconds the virtual tables may take to reach --seconds


def add_fleet(sub):
    p = command(sub, "fleet", cmd_fleet, t("help.fleet"), False,
                "mjctl fleet\n  mjctl --sim --tables 3 fleet --seconds 60 --json", link=False)
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help=t("help.opt_fleet_seconds"))
    p.add_argument("--broker", metavar="HOST:PORT", help=t("help.opt_fleet_broker"))
    p.add_argument("--user-file", metavar="FILE", help=t("help.opt_fleet_user"))
    p.add_argument("--fault-rate", type=float, default=0.2, metavar="R",
                   help=t("help.opt_fleet_fault_rate"))
    return p


def cmd_fleet(args):
    if args.sim:
        return _sim(args)
    return _watch(args)


def _sim(args):
    from host_tools.fleet.fleet import Fleet, FleetError
    if args.seconds is None or not args.seconds > 0:
        raise CliError(EXIT_INPUT, t("err.fleet_seconds"))
    n = args.tables or 3
    if not 1 <= n <= 200:
        raise CliError(EXIT_INPUT, t("err.fleet_tables"))
    t0 = time.monotonic()
    with Fleet(tables=n, speed=0, seconds=args.seconds, page=False, seed=args.seed,
               fault_rate=args.fault_rate) as fleet:
        try:
            out = fleet.run_for(SIM_TIMEOUT_S)
        except FleetError as e:
            raise CliError(EXIT_NO_ANSWER, str(e))
        snap = fleet.dashboard.snapshot()
    out["wall_s"] = round(time.monotonic() - t0, 1)
    if args.json:
        print(json.dumps(out))
    else:
        console().print(render(snap))
    return 0 if all(tb["online"] for tb in out["tables"]) else 1


def _connection(args):
    """(host, port, (user, password)): --broker and --user-file, else the
    file the running `make fleet` wrote."""
    from host_tools.fleet.fleet import CONNECTION
    if args.broker:
        host, _, port = args.broker.rpartition(":")
        if not host or not port.isdigit() or not args.user_file:
            raise CliError(EXIT_INPUT, t("err.fleet_broker"))
        path = args.user_file
    else:
        path = str(CONNECTION)
        host = port = None
    try:
        with open(path) as f:
            conf = json.load(f)
        user = (conf["user"], conf["password"])
    except FileNotFoundError:
        raise CliError(EXIT_NO_ANSWER, t("err.fleet_none", path=path))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise CliError(EXIT_INPUT, t("err.fleet_file", path=path, reason=e))
    if host is None:
        host, port = conf["host"], conf["port"]
    return host, int(port), user


def _watch(args):
    from rich.live import Live
    from host_tools.fleet.page import Dashboard
    host, port, user = _connection(args)
    end = None if args.seconds is None else time.monotonic() + args.seconds
    if args.json and end is None:
        end = time.monotonic() + 3.0       # what the broker holds comes in at once
    with Dashboard(port, user, host=host) as dash:
        if args.json:
            while time.monotonic() < end:
                time.sleep(0.1)            # the view fills in; wall time, a person's
            snap = dash.snapshot()
            if not snap["broker"]:
                raise CliError(EXIT_NO_ANSWER, t("err.fleet_broker_down", host=host, port=port))
            print(json.dumps(snap))
            return 0
        c = console()
        with Live(render(dash.snapshot()), console=c, auto_refresh=False) as live:
            while end is None or time.monotonic() < end:
                time.sleep(0.5)
                live.update(render(dash.snapshot()), refresh=True)
    return 0


def _offline(tb):
    if tb["online"]:
        return "[green]%s[/]" % t("fleet.online")
    why = (t("fleet.off.silent", s=int(tb["silent_s"] or 0)) if tb["offline"] == "silent"
           else t("fleet.off." + tb["offline"]))
    return "[red]%s[/] %s" % (t("fleet.offline"), why)


def _hms(s):
    s = int(s or 0)
    return "%d:%02d:%02d" % (s // 3600, s % 3600 // 60, s % 60)


def render(snap):
    """The view as rich renderables: a table of the tables, the faults of
    the active ones with cause and fix, the fault history."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table
    title = "%s · %s · %s" % (
        t("fleet.title"), t("fleet.broker_up") if snap["broker"] else t("fleet.broker_down"),
        t("fleet.messages", n=snap["messages"]))
    if snap["bad"] or snap["dropped"]:
        title += " · " + t("fleet.malformed", bad=snap["bad"], dropped=snap["dropped"])
    tb = Table(title=title, title_justify="left")
    for key in ("fleet.table", "fleet.online", "fleet.state", "fleet.dealer", "fleet.hands_today",
                "fleet.in_use", "fleet.fault", "fleet.counters"):
        tb.add_column(t(key, id="").strip())
    faults = []
    for x in snap["tables"]:
        f = x["fault"]
        name = fault_texts(f["code"])[0] if f else ""
        c = x["counters"] or {}
        # A state the texts do not know is the table's own text: shown
        # as it is, never read as rich's markup.
        tb.add_row(x["id"], _offline(x), escape(word("state", x["state"])) if x["state"] else "-",
                   t("fleet.seat", n=x["dealer"]) if x["dealer"] is not None else "-",
                   "-" if x["hands_today"] is None else str(x["hands_today"]), _hms(x["in_use_s"]),
                   "[red]%d %s[/]" % (f["code"], name) if f else "",
                   "%s %s · %s %s" % (t("fleet.cycles"), c.get("cycles", "-"), t("fleet.hands"),
                                      c.get("hands", "-")) if c else "-")
        if f:
            faults.append((x["id"], f))
    parts = [tb]
    for tid, f in faults:
        name, cause, fix = fault_texts(f["code"])
        parts.append("[bold red]%s · %s %d %s[/]\n  %s: %s\n  %s: %s" % (
            t("fleet.table", id=tid), t("fleet.fault"), f["code"], name, t("fleet.cause"), cause,
            t("fleet.fix"), fix))
    hist = Table(title=t("fleet.history"), title_justify="left")
    for key in ("fleet.time", "fleet.table", "fleet.fault", ""):
        hist.add_column(t(key, id="").strip() if key else "")
    for e in snap["history"][:10]:
        hist.add_row(time.strftime("%H:%M:%S", time.localtime(e["at"])), e["table"],
                     "%d %s" % (e["code"], fault_texts(e["code"])[0]),
                     t("fleet.cleared_at", at=time.strftime("%H:%M:%S", time.localtime(e["cleared_at"])))
                     if e["cleared_at"] else t("fleet.active"))
    if not snap["history"]:
        hist.add_row("", "", t("fleet.history_none"), "")
    parts.append(hist)
    return Group(*parts)
