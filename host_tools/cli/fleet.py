"""`mjctl fleet`: the parlour page in the terminal (docs/fleet.md).

    mjctl fleet [--seconds S] [--json]          the running `make fleet`'s broker
    mjctl fleet --broker HOST:PORT --user-file F  a parlour's broker, F a JSON
                                                  {"user": ..., "password": ...}
    mjctl fleet --day YYYY-MM-DD [--csv] [--store FILE]   a day's figures
    mjctl --sim --tables N fleet --seconds S --json [--store FILE]

Without --sim it subscribes to the broker with the dashboard's read-only
user and shows every table live until Ctrl-C (or for S wall seconds;
--json: the view after them, one JSON object), the tables that need the
owner first. The page's store of the day's figures (days.py), read only,
gives it what the page knows from before it started: hands today, the
dealer, since when a fault or an offline table began. With --day it
prints that day's figures from the store (--csv: as CSV). With --sim it
runs N virtual tables with the project's broker for S virtual seconds, as
fast as they go, and prints the broker's version and port, each table's
id, online, state, hands, faults by code and counters, and the messages
seen.
"""

import json
import sqlite3
import sys
import time

from host_tools.cli.common import EXIT_INPUT, EXIT_NO_ANSWER, CliError, command, console, t
from host_tools.texts import duration, fault_short, fault_texts, lang

SIM_TIMEOUT_S = 600        # wall seconds the virtual tables may take to reach --seconds


def add_fleet(sub):
    p = command(sub, "fleet", cmd_fleet, t("help.fleet"), False,
                "mjctl fleet\n  mjctl fleet --day 2026-12-05 --csv\n"
                "  mjctl --sim --tables 3 fleet --seconds 60 --json", link=False)
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help=t("help.opt_fleet_seconds"))
    p.add_argument("--broker", metavar="HOST:PORT", help=t("help.opt_fleet_broker"))
    p.add_argument("--user-file", metavar="FILE", help=t("help.opt_fleet_user"))
    p.add_argument("--fault-rate", type=float, default=0.2, metavar="R",
                   help=t("help.opt_fleet_fault_rate"))
    p.add_argument("--day", metavar="YYYY-MM-DD", help=t("help.opt_fleet_day"))
    p.add_argument("--csv", action="store_true", help=t("help.opt_fleet_csv"))
    p.add_argument("--store", metavar="FILE", help=t("help.opt_fleet_store"))
    return p


def cmd_fleet(args):
    if args.csv and not args.day:
        raise CliError(EXIT_INPUT, t("err.fleet_csv"))
    if args.day is not None:
        return _day(args)
    if args.sim:
        return _sim(args)
    return _watch(args)


def _open_store(path, needed):
    """The page's store, read only; None when it is not there and not
    `needed` (a view without the page's memory), else a CliError."""
    from host_tools.fleet.days import Store
    try:
        return Store(path, readonly=True)
    except sqlite3.Error as e:
        if not needed:
            return None
        raise CliError(EXIT_NO_ANSWER, t("err.fleet_store", path=path, reason=e))


def _day(args):
    from host_tools.fleet import days
    from host_tools.fleet.fleet import STORE
    try:
        day = days.parse_day(args.day)
    except ValueError:
        raise CliError(EXIT_INPUT, t("err.fleet_day", day=args.day))
    path = args.store or str(STORE)
    store = _open_store(path, True)
    try:
        rows = store.day(day)
    except sqlite3.Error as e:
        raise CliError(EXIT_NO_ANSWER, t("err.fleet_store", path=path, reason=e))
    finally:
        store.close()
    if args.csv:
        sys.stdout.write(days.csv_text(rows, lang()))
    elif args.json:
        print(json.dumps({"day": day, "tables": rows, "totals": days.totals(rows)}))
    else:
        console().print(render_day(day, rows))
    return 0


def _sim(args):
    from host_tools.fleet.fleet import Fleet, FleetError
    if args.seconds is None or not args.seconds > 0:
        raise CliError(EXIT_INPUT, t("err.fleet_seconds"))
    n = args.tables or 3
    if not 1 <= n <= 200:
        raise CliError(EXIT_INPUT, t("err.fleet_tables"))
    t0 = time.monotonic()
    with Fleet(tables=n, speed=0, seconds=args.seconds, page=False, seed=args.seed,
               fault_rate=args.fault_rate, store=args.store) as fleet:
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
    """(host, port, (user, password), the page's store or None): --broker
    and --user-file, else the file the running `make fleet` wrote."""
    from host_tools.fleet.fleet import CONNECTION, STORE
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
    # A parlour's broker (--broker) has its page elsewhere: its store only when given.
    store = args.store or (None if args.broker else conf.get("store") or str(STORE))
    return host, int(port), user, store


def _watch(args):
    from rich.live import Live
    from host_tools.fleet.page import Dashboard
    host, port, user, store_path = _connection(args)
    end = None if args.seconds is None else time.monotonic() + args.seconds
    if args.json and end is None:
        end = time.monotonic() + 3.0       # what the broker holds comes in at once
    store = _open_store(store_path, bool(args.store)) if store_path else None
    with Dashboard(port, user, host=host, store=store) as dash:
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


def status(tb, now):
    """What the owner reads of a table: a fault or offline with how long,
    else its state in words (rich markup, the state escaped)."""
    from rich.markup import escape
    from host_tools.texts import LANGS
    if not tb["online"]:
        since = tb.get("offline_since")
        return "[bold]%s[/]" % escape(t("fleet.offline_for", d=duration(now - since))
                                      if since else t("fleet.offline"))
    f = tb["fault"]
    if f:
        return "[bold red]%s[/] %d %s" % (escape(t("fleet.stopped_for", d=duration(now - f["since"]))),
                                          f["code"], escape(fault_short(f["code"])))
    words = LANGS[lang()].TEXTS
    state = tb["state"]
    # A state the texts do not know is the table's own text, shown as it is.
    return escape(words.get("fleet.state.%s" % state, state) if state else
                  t("fleet.state.unknown"))


def _column(table, key, **kw):
    """A column that never cuts its header: at least its header wide."""
    from rich.cells import cell_len
    head = t(key)
    table.add_column(head, min_width=cell_len(head), **kw)


def render(snap):
    """The view as rich renderables: the tables that need the owner first,
    each with how long; the faults with cause and fix; the fault history.
    Narrow enough for 80 columns (a pipe's): the status wraps before any
    header is cut."""
    from rich import box
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table
    from host_tools.fleet.model import by_need
    now = snap["now"]
    title = "%s · %s · %s" % (
        t("fleet.title"), t("fleet.broker_up") if snap["broker"] else t("fleet.broker_down"),
        t("fleet.messages", n=snap["messages"]))
    if snap["bad"] or snap["dropped"]:
        title += " · " + t("fleet.malformed", bad=snap["bad"], dropped=snap["dropped"])
    tb = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    _column(tb, "fleet.col.table", no_wrap=True)
    _column(tb, "fleet.col.status", overflow="fold")
    for key in ("fleet.col.dealer", "fleet.col.hands", "fleet.col.in_play", "fleet.col.stopped"):
        _column(tb, key, no_wrap=True)
    faults = []
    for x in by_need(snap["tables"]):
        today = x.get("today") or {}
        tb.add_row(escape(x["id"]), status(x, now),
                   t("fleet.seat", n=x["dealer"]) if x["dealer"] is not None else "-",
                   str(today.get("hands", 0)), duration(today.get("in_play_s")),
                   duration(today.get("stopped_s")))
        if x["fault"] and x["online"]:
            faults.append((x["id"], x["fault"]))
    d = snap.get("today") or {}
    parts = [tb, t("fleet.parlour_today", hands=d.get("hands", 0),
                   play=duration(d.get("in_play_s"), hours=True), faults=d.get("faults", 0),
                   stopped=duration(d.get("stopped_s"), hours=True))]
    for tid, f in faults:
        name, cause, fix = fault_texts(f["code"])
        parts.append("[bold red]%s · %s %d %s[/]\n  %s: %s\n  %s: %s" % (
            escape(t("fleet.table", id=tid)), t("fleet.fault"), f["code"], escape(name),
            t("fleet.cause"), cause, t("fleet.fix"), fix))
    parts.append(_history(snap))
    return Group(*parts)


def _history(snap):
    from rich import box
    from rich.markup import escape
    from rich.table import Table
    hist = Table(title=t("fleet.history"), title_justify="left", box=box.SIMPLE_HEAD,
                 pad_edge=False)
    for key in ("fleet.col.time", "fleet.col.table", "fleet.col.fault", "fleet.col.status"):
        _column(hist, key)
    for e in snap["history"][:10]:
        hist.add_row(time.strftime("%H:%M:%S", time.localtime(e["at"])), escape(e["table"]),
                     "%d %s" % (e["code"], fault_short(e["code"])),
                     t("fleet.cleared_at", at=time.strftime("%H:%M:%S", time.localtime(e["cleared_at"])))
                     if e["cleared_at"] else t("fleet.active"))
    if not snap["history"]:
        hist.add_row("", "", t("fleet.history_none"), "")
    return hist


def render_day(day, rows):
    """A day's figures: a line per table and the parlour's."""
    from rich import box
    from rich.table import Table
    from host_tools.fleet.days import totals
    tb = Table(title="%s · %s" % (t("fleet.days"), day), title_justify="left", box=box.SIMPLE_HEAD,
               pad_edge=False)
    for key in ("fleet.col.table", "fleet.col.hands", "fleet.col.in_play", "fleet.col.faults",
                "fleet.col.stopped", "fleet.col.offline"):
        _column(tb, key, no_wrap=True)
    if not rows:
        return t("fleet.no_figures", day=day)
    for r in rows + [dict(totals(rows), tbl=t("fleet.parlour"))]:
        tb.add_row(r["tbl"], str(r["hands"]), duration(r["in_play_s"], hours=True), str(r["faults"]),
                   duration(r["stopped_s"], hours=True), duration(r["offline_s"], hours=True))
    return tb
