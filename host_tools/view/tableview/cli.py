"""Running the demo: arguments, the plain and the live loop, Ctrl-C."""

import argparse
import os
import signal
import sys
import threading
import time

from firmware.link.codec import LinkError
from host_tools.view.tableview.demo import (DEFAULT_SPEED, FIX_AFTER_S, FRAME_S, Demo, ViewState,
                                      seat_players)
from host_tools.view.tableview.render import clock_text, render
from host_tools.texts.events import plain_lines
from host_tools.view.tableview.snapshot import snapshot
from host_tools import texts
from host_tools.texts import t


# -- running it ---------------------------------------------------------------------

def run(args, out):
    """Returns the exit code."""
    from host_tools.link.client import LinkClient
    from host_tools.image.mpenv import MissingBuild
    from host_tools.sim.launcher import SimTable

    live = not args.plain and out.isatty()
    stop = threading.Event()
    old = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            sim = SimTable(seed=args.seed, faults=args.fault, realtime=True, speed=args.speed)
        except (ValueError, MissingBuild) as e:     # a bad --fault; no twin or an old one
            print("tableview: %s" % e, file=sys.stderr)
            return 2
        seat_players(sim.table, args.seed)     # they play every hand, the firmware follows
        with sim:
            with LinkClient(sim.link_path) as link:
                view = ViewState(args.seed, args.speed, sim.code, args.cycles)
                if live:
                    return _run_live(sim, link, view, args, stop, out)
                return _run_plain(sim, link, view, args, stop, out)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _loop(sim, link, demo, stop, frame=None):
    """Events and actions until Ctrl-C, --cycles, or the table stops."""
    demo.begin()
    next_frame = 0.0
    while not stop.is_set() and not demo.done:
        ev = link.next_event(timeout=0.02)
        while ev is not None:
            demo.on_event(ev)
            ev = link.next_event(timeout=0)
        demo.tick()
        if stop.is_set():
            break
        if not sim.alive:
            return t("view.sim_stopped", reason=sim.exit_reason)
        if frame is not None and time.monotonic() >= next_frame:
            next_frame = time.monotonic() + FRAME_S
            frame()
    return None


def _cycles(n):
    return t("view.n_cycle") if n == 1 else t("view.n_cycles", n=n)


def _run_plain(sim, link, view, args, stop, out):
    def write(line):
        out.write(line + "\n")
        out.flush()

    def echo(entry, extra):
        for line in plain_lines(entry, extra):
            write(line)

    write("# " + t("view.plain_head", seed=args.seed, speed=args.speed, code=sim.code))
    demo = Demo(sim, link, view, args.fix_after, echo=echo)
    try:
        problem = _loop(sim, link, demo, stop)
    except BrokenPipeError:                # e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        return 0
    if problem:
        print("tableview: %s\n%s" % (problem, sim.firmware_log()[-2000:]), file=sys.stderr)
        return 1
    write("# " + t("view.plain_end", cycles=_cycles(view.cycles), s=sim.table.now / 1000.0))
    return 0


def _run_live(sim, link, view, args, stop, out):
    from rich.console import Console
    from rich.live import Live

    console = Console(file=out)
    demo = Demo(sim, link, view, args.fix_after)
    with Live(console=console, auto_refresh=False, transient=False) as live:
        def frame():
            live.update(render(snapshot(sim.table, view), console.width), refresh=True)
        frame()
        problem = _loop(sim, link, demo, stop, frame)
        frame()
    if problem:
        console.print("[red]%s[/]" % problem)
        print(sim.firmware_log()[-2000:], file=sys.stderr)
        return 1
    console.print(t("view.live_end", cycles=_cycles(view.cycles), clock=clock_text(sim.table.now)))
    return 0


def parser():
    ap = argparse.ArgumentParser(prog="python -m host_tools.view.tableview",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="virtual table seed (default 0)")
    ap.add_argument("--speed", type=float, default=DEFAULT_SPEED,
                    help="virtual seconds per wall second (default %g)" % DEFAULT_SPEED)
    ap.add_argument("--cycles", type=int, default=None, metavar="N",
                    help="stop after N cycles (default: until Ctrl-C)")
    ap.add_argument("--fix-after", type=float, default=FIX_AFTER_S, metavar="S",
                    help="virtual seconds before a technician repairs a fault (default %g)"
                    % FIX_AFTER_S)
    ap.add_argument("--fault", action="append", default=[], metavar="NAME[:ARG]",
                    help="inject a virtual table fault at power-on, repeatable")
    ap.add_argument("--plain", action="store_true", help="plain lines, one per link event")
    ap.add_argument("--lang", choices=sorted(texts.LANGS),
                    help="language of the view: en or zh (default: from LANG, else en)")
    return ap


def main(argv=None, out=None):
    ap = parser()
    args = ap.parse_args(argv)
    texts.set_lang(args.lang)
    if not args.speed > 0:
        ap.error("--speed must be > 0")
    if args.cycles is not None and args.cycles < 1:
        ap.error("--cycles must be at least 1")
    try:
        return run(args, out or sys.stdout)
    except LinkError as e:
        print("tableview: %s" % e, file=sys.stderr)
        return 2
