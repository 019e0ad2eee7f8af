"""mjctl: the technician's and test engineer's command line.

    mjctl --sim [--seed N] [--heap BYTES] [--fault NAME[:ARG]]... cycle --json
    mjctl --sim [--seed N] [--heap BYTES] hand --json     (plays one with virtual players)
    mjctl --port DEV hand | log [--json]; --key FILE jog plate|lane [N] MS
    mjctl --sim serve --json
    mjctl --port DEV status [--json]

`--sim` starts the real firmware on the virtual table (host_tools/vtable),
frozen into the 32-bit twin as a board runs it (`--form mpy` or `source`
for the development forms); `--port` talks to a controller, real or
virtual, over its link.
"""

import argparse
import json
import signal
import sys
import threading
import time

from host_tools import fault_table, linkmux, texts
from host_tools.texts import fault_texts, pad, t, word
from firmware.link.codec import LinkError
from host_tools.link_client import LinkClient
from host_tools.mpenv import MissingBuild

CYCLE_WALL_TIMEOUT_S = 60      # wall-clock guard; virtual time runs far faster
HAND_WALL_TIMEOUT_S = 120
# Status fields whose label the view shares; the others are status.<field>.
STATUS_LABELS = {"state": "label.state", "cycles": "label.cycles", "dealer": "label.dealer",
                 "dice": "label.dice", "firmware": "label.firmware"}
STATE_KEYS = ("phase", "wall", "reserve", "drawable", "gold", "marker", "head", "tail")


def describe_fault(ev):
    """A fault event with its cause and fix from the firmware's own table,
    in the chosen language (`name` stays the firmware's: scripts match it)."""
    _name, cause, fix = fault_texts(ev["code"])
    return {"code": ev["code"], "name": fault_table.name_of(ev["code"]), "cause": cause, "fix": fix,
            "detail": ev.get("detail", {}), "t_ms": ev.get("t")}


def run_cycle(sim, link, timeout_s=CYCLE_WALL_TIMEOUT_S):
    """One table cycle from `start` to walls up and dice shown (or a fault).
    Returns the cycle's JSON object; `runtime` is what the firmware says it
    runs on (word size, frozen, MicroPython's version)."""
    info = link.hello()
    out = {"ok": False, "table_time_s": None, "lower_bound_s": None, "dice": None,
           "dealer": None, "walls": {"tiles_per_side": None}, "faults": [],
           "runtime": info["runtime"]}
    status = link.request("status")
    if status["fault"]:                    # found at boot: nothing may move
        out["faults"].append(describe_fault(status["fault"]))
        out["firmware"] = {"code": sim.code, "restarts": sim.restarts}
        return out
    link.request("start")
    started = link.wait_event(lambda e: e["ev"] == "state" and e["state"] == "building",
                              timeout=timeout_s)
    while True:
        ev = link.wait_event(lambda e: e["ev"] in ("walls", "dice", "fault"), timeout=timeout_s)
        if ev["ev"] == "walls" and out["walls"]["tiles_per_side"] is None:
            out["walls"]["tiles_per_side"] = ev["tiles_per_side"]
        elif ev["ev"] == "fault":
            out["faults"].append(describe_fault(ev))
            break
        elif ev["ev"] == "dice":
            out["ok"] = True
            out["dice"] = [ev["a"], ev["b"]]
            out["dealer"] = ev["dealer"]
            out["table_time_s"] = round((ev["t"] - started["t"]) / 1000.0, 3)
            bound = sim.table.lower_bound_ms(start_time=started["t"])
            out["lower_bound_s"] = round(bound / 1000.0, 3)
            break
    out["firmware"] = {"code": sim.code, "restarts": sim.restarts}
    return out


def public_state(ev):
    """A `hand` event as engine_core.replay names the state (stacks as
    {"seat", "stack"}), with the op the controller saw."""
    out = {"op": ev["op"]}
    for k in STATE_KEYS:
        v = ev[k]
        if k in ("marker", "head", "tail") and v is not None:
            v = {"seat": v[0], "stack": v[1]}
        out[k] = v
    return out


def run_hand(sim, link, players, timeout_s=HAND_WALL_TIMEOUT_S):
    """One cycle, then one hand played by `players` (HandPlayers) to its
    result. Returns the hand's JSON object."""
    cycle = run_cycle(sim, link)
    out = {"ok": False, "result": None, "scenario": None, "observed": [], "cycle": cycle,
           "faults": list(cycle["faults"]), "runtime": cycle["runtime"]}
    if not cycle["ok"]:
        return out
    deadline = time.monotonic() + timeout_s
    while True:
        # Every event is taken off the queue (lane counts of the next set
        # and the rest would otherwise fill it during a long hand).
        ev = link.next_event(timeout=max(0.0, deadline - time.monotonic()))
        if ev is None:
            raise LinkError("timeout", "the hand did not end in %d s" % timeout_s)
        if ev["ev"] == "hand":
            out["observed"].append(public_state(ev))
        elif ev["ev"] == "irregular":
            out.setdefault("irregular", []).append({"slot": ev["slot"], "reason": ev["reason"]})
        elif ev["ev"] == "fault":
            out["faults"].append(describe_fault(ev))
            break
        elif ev["ev"] == "result":
            out["result"] = {"winner": ev["winner"], "draw": ev["winner"] is None,
                             "dealer": ev["dealer"], "wins_in_row": ev["wins_in_row"],
                             "streak": ev["streak"]}
            break
    out["scenario"] = players.scenario
    out["players"] = {"result": players.result, "skipped": len(players.skipped),
                      "abandoned": players.abandoned}
    out["ok"] = (not out["faults"] and out["result"] is not None and players.scenario is not None
                 and len(out["observed"]) == len(players.scenario["events"])
                 and not players.skipped and not players.abandoned)
    return out


def cmd_hand(args):
    if not args.sim:                      # a real table: the hand as it stands
        from host_tools.mjctl_service import cmd_current_hand
        return cmd_current_hand(args)
    from host_tools.vtable.hand_players import HandPlayers
    from host_tools.vtable.launcher import SimTable
    with SimTable(seed=args.seed, faults=args.fault, heap=args.heap, form=args.form) as sim:
        players = HandPlayers(sim.table, seed=args.seed)
        with LinkClient(sim.link_path) as link:
            try:
                out = run_hand(sim, link, players)
            except LinkError as e:
                out = {"ok": False, "error": str(e), "faults": [],
                       "firmware_log": sim.firmware_log()[-2000:]}
    emit(args, out, human_hand)
    return 0 if out.get("ok") else 1


def cmd_cycle(args):
    from host_tools.vtable.launcher import SimTable
    with SimTable(seed=args.seed, faults=args.fault, heap=args.heap, form=args.form) as sim:
        with LinkClient(sim.link_path) as link:
            try:
                out = run_cycle(sim, link)
            except LinkError as e:
                out = {"ok": False, "error": str(e), "faults": [],
                       "firmware_log": sim.firmware_log()[-2000:]}
    emit(args, out, human_cycle)
    return 0 if out.get("ok") else 1


def cmd_serve(args):
    from host_tools.vtable.launcher import SimTable
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    key, shown = True, None
    if args.key:       # practice with a key file of one's own: made when missing
        from host_tools import tablekey
        try:
            key, made = tablekey.read_or_make(args.key)
        except tablekey.KeyFileError as e:
            print("mjctl: %s" % e, file=sys.stderr)
            return 1
        shown = {"file": args.key, "fingerprint": tablekey.fingerprint(key), "made": made}
    with SimTable(seed=args.seed, faults=args.fault, heap=args.heap, form=args.form, realtime=True,
                  key=key) as sim:
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


def sim_key(args):
    """The virtual table's service key: --key FILE's bytes, else random."""
    if getattr(args, "key", None):
        from pathlib import Path
        return Path(args.key).read_bytes()
    return True


def cmd_status(args):
    if args.sim:
        from host_tools.vtable.launcher import SimTable
        with SimTable(seed=args.seed, faults=args.fault, heap=args.heap, form=args.form) as sim:
            with LinkClient(sim.link_path) as link:
                return _status(args, link)
    with LinkClient(linkmux.shared(args.port)) as link:
        return _status(args, link)


def fields(answer):
    """An answer's own fields: without the envelope's `ok` and `op`."""
    return {k: answer[k] for k in answer if k not in ("ok", "op")}


def _status(args, link):
    info = link.hello()
    st = link.request("status")
    out = {"firmware": info.get("fw"), "proto": info.get("proto"), "build": info.get("build")}
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

def emit(args, obj, human):
    if args.json:
        print(json.dumps(obj))
    else:
        human(obj)


def console():
    from rich.console import Console
    return Console()


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
    if out.get("observed"):
        last = out["observed"][-1]
        c.print(t("mj.last_state", phase=word("phase", last["phase"]), wall=last["wall"],
                  reserve=last["reserve"], drawable=last["drawable"], gold=last["gold"]))
    for f in out.get("faults", []):
        human_fault(c, f)
    if out.get("error"):
        c.print("[red]%s[/]" % out["error"])


def human_fault(c, f):
    name, cause, fix = fault_texts(f["code"])
    c.print("[bold red]%s[/] %s" % (t("fault.head", code=f["code"], name=name),
                                    json.dumps(f["detail"])))
    for label, text in ((t("fault.cause"), cause), (t("fault.fix"), fix)):
        line = "  %s %s" % (pad(label + t("punct.colon").rstrip(), 6), text)
        if texts.CJK.search(text):      # Chinese breaks between any two characters
            from rich.cells import chop_cells
            for part in chop_cells(line, c.width):
                c.print(part, markup=False, highlight=False)
        else:                           # English at spaces
            c.print(line)


def human_status(out):
    from rich.table import Table
    c = console()
    table = Table(show_header=False, box=None)
    words = {"state": "state", "phase": "build"}
    for k in ("state", "phase", "cycles", "dealer", "dice", "tiles_per_side", "lanes",
              "lifters", "uptime", "firmware", "proto", "build"):
        v = out.get(k)
        if k in words and v is not None:
            v = word(words[k], v)
        elif k == "lifters" and v:
            v = [word("lift", m) for m in v]
        table.add_row(t(STATUS_LABELS.get(k, "status." + k)), str(v))
    rt = out.get("runtime")
    if rt:
        table.add_row(t("status.runtime"), t(
            "status.runtime.text", version=rt["micropython"], bits=rt["bits"],
            form=t("status.runtime.frozen") if rt["frozen"] else t("status.runtime.files")))
    c_ = out.get("counters")
    if c_:
        table.add_row(t("status.counters"), t(
            "status.counters.text", hands=c_["hands"], lifts=c_["lifts"],
            fed=c_["tiles_fed"], faults=c_["faults"] or t("status.counters.none")))
    c.print(table)
    if out.get("fault"):
        human_fault(c, out["fault"])


# -- arguments ---------------------------------------------------------------

def command(sub, name, fn, text, need_sim):
    """A subcommand with its --json; returns its parser for more arguments."""
    p = sub.add_parser(name, help=text)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=fn, need_sim=need_sim)
    return p


def parser():
    ap = argparse.ArgumentParser(prog="mjctl", description=__doc__.split("\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--sim", action="store_true", help="run the firmware on the virtual table")
    where.add_argument("--port", metavar="DEV", help="a controller's link (device path or URL)")
    ap.add_argument("--seed", type=int, default=0, help="virtual table seed (--sim)")
    ap.add_argument("--heap", type=int, metavar="BYTES", help="MicroPython heap size (--sim)")
    ap.add_argument("--form", choices=("image", "mpy", "source"), default="image",
                    help="how the firmware runs (--sim): frozen into the 32-bit twin as a"
                    " board ships it (image, the default), or for development its .mpy files"
                    " (make mpy) or .py sources on the unfrozen 32-bit build")
    ap.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG]",
                    help="inject a virtual table fault (--sim), repeatable")
    ap.add_argument("--key", metavar="FILE",
                    help="the table's service key file: for service commands; with --sim,"
                    " the virtual table's key")
    ap.add_argument("--lang", choices=sorted(texts.LANGS),
                    help="language of the output: en or zh (default: from LANG, else en)")
    sub = ap.add_subparsers(dest="command", required=True)
    command(sub, "cycle", cmd_cycle, "run one table cycle (--sim)", True)
    command(sub, "hand", cmd_hand, "--sim: one cycle and one hand played by virtual players;"
            " --port: the current hand's public state", False)
    p = command(sub, "serve", cmd_serve, "run the virtual table in real time for any client"
                " (--sim)", True)
    # `mjctl --sim serve --key FILE` as well as `mjctl --sim --key FILE serve`
    # (SUPPRESS: absent here, the global --key stays).
    p.add_argument("--key", metavar="FILE", default=argparse.SUPPRESS,
                   help="the virtual table's service key file, made if missing")
    command(sub, "status", cmd_status, "the controller's state", False)
    from host_tools.mjctl_service import register
    register(sub)
    return ap


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    texts.set_lang(args.lang)
    if args.need_sim and not args.sim:
        ap.error("%s needs --sim" % args.command)
    if not args.sim and (args.fault or args.heap or args.form != "image"):
        ap.error("--fault, --heap and --form need --sim")
    try:
        return args.fn(args)
    except LinkError as e:
        print("mjctl: %s" % e, file=sys.stderr)
        return 2
    except (ValueError, MissingBuild) as e:   # a bad --fault text; no twin or an old one
        print("mjctl: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
