"""mjctl's service commands (docs/technician.md): what a technician runs on
a table, with `--port DEV` or on the virtual table with `--sim`.

    mjctl --port DEV [--json] hand                  the current hand's public state
    mjctl --port DEV [--json] log                   faults and service sessions
    mjctl --port DEV [--json] clear                 clear the active fault
    mjctl --port DEV --key FILE [--json] jog plate 500
    mjctl --port DEV --key FILE [--json] jog lane 2 300

A jog opens a service session with the table's key (HMAC challenge-response,
docs/protocol.md), runs, and closes it. Under --sim the virtual table's own
key is used.
"""

import json
from pathlib import Path

from host_tools.link_client import LinkClient


def _link(args, fn):
    """fn(link, key) on the chosen controller; the key from --key, or the
    virtual table's own under --sim."""
    if args.sim:
        from host_tools.mjctl import sim_key
        from host_tools.vtable.launcher import SimTable
        with SimTable(seed=args.seed, faults=args.fault, heap=args.heap,
                      key=sim_key(args)) as sim:
            with LinkClient(sim.link_path) as link:
                link.hello()
                return fn(link, sim.key)
    key = Path(args.key).read_bytes() if getattr(args, "key", None) else None
    with LinkClient(args.port) as link:
        link.hello()
        return fn(link, key)


def _answer(args, op, human):
    """One request; its answer printed (--json: as JSON, else by `human`)."""
    def run(link, _key):
        out = link.request(op)
        out.pop("ok", None)
        out.pop("op", None)
        _emit(args, out, human)
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


def cmd_jog(args):
    lane = args.what[0] if len(args.what) == 2 else 0
    ms = args.what[-1]

    def run(link, key):
        if key is None:
            raise SystemExit("mjctl: jog needs the table's key: --key FILE (made by make deploy)")
        session = link.open_service(key)
        try:
            link.request("jog", session=session, actuator=args.actuator, n=lane, ms=ms)
        finally:
            link.request("service_close")
        _emit(args, {"ok": True, "actuator": args.actuator, "lane": lane, "ms": ms},
              lambda o: _console().print("jogged %s%s for %d ms" % (
                  o["actuator"], " %d" % o["lane"] if o["actuator"] == "lane" else "", o["ms"])))
        return 0
    return _link(args, run)


def register(sub):
    from host_tools.mjctl import command
    command(sub, "clear", cmd_clear, "clear the active fault: the table resumes where it stopped",
            False)
    command(sub, "log", cmd_log, "fault history and service sessions, newest first", False)
    p = command(sub, "jog", cmd_jog, "run one motor briefly (service: needs --key)", False)
    p.add_argument("actuator", choices=["plate", "lane"])
    p.add_argument("what", type=int, nargs="+", metavar="[LANE] MS",
                   help="for a lane its number 0..3, then the time in ms (at most 2000)")


# -- output ------------------------------------------------------------------

def _emit(args, obj, human):
    from host_tools.mjctl import emit
    emit(args, obj, human)


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
