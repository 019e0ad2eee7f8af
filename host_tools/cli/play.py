"""mjctl's commands of the cycle and the hand (docs/technician.md): the
table playing, on the virtual table or on a controller.

    mjctl --sim [--seed N] [--fault NAME[:ARG]]... cycle [--json]
    mjctl --sim [--seed N] hand [--json] [--power-cut S] [--take-while-off]
    mjctl --port DEV hand [--json]            the current hand's public state
    mjctl --port DEV start | clear [--json]
    mjctl --sim serve [--key FILE] [--players] [--speed X] [--json]
                                              a virtual table for other tools, and a
                                              practice table (host_tools/sim/practice.py)

`start` builds the walls now (after `clear` of a fault that stopped the
table at boot), `clear` clears the active fault. Neither needs the
table's key (`new-game`, which does, is service.py's).
"""

import argparse
import json
import signal
import sys
import threading

from firmware.link.codec import LinkError
from host_tools.link.client import LinkClient
from host_tools.texts import word
from host_tools.cli import common
from host_tools.cli.common import (EXIT_INPUT, CliError, command, console, emit, human_fault, t,
                                   virtual_table)
from host_tools.cli.ops import run_cycle, run_hand


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


def cmd_cycle(args):
    return _on_sim(args, lambda sim, link, _: run_cycle(sim, link), human_cycle)


def cmd_hand(args):
    if not args.sim:                      # a real table: the hand as it stands
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
    if not args.speed > 0:
        raise CliError(EXIT_INPUT, t("err.speed", value=args.speed))
    sim = virtual_table(args, realtime=True, speed=args.speed, key=key)
    _practice(args, sim, done)             # seated before the table's thread runs
    with sim:
        if args.json:
            print(json.dumps({"link": sim.link_path, "key": shown, "players": args.players}),
                  flush=True)
        else:
            if shown:
                print(t("sim.key", file=shown["file"], fp=shown["fingerprint"],
                        made=t("sim.key_made") if shown["made"] else ""))
            print(t("sim.running", link=sim.link_path))
            if args.players:
                print(t("sim.players"))
            print(t("sim.practice"), flush=True)
        while not done.wait(0.2):
            if not sim.alive:
                print("the virtual table stopped: %s" % sim.exit_reason, file=sys.stderr)
                return 1
    return 0


def _practice(args, sim, done):
    """The practice table (host_tools/sim/practice.py): the players when
    asked, and the technician's hands: a jog that repairs the part it
    shows, and the lines typed in this terminal."""
    from host_tools.sim.practice import PracticeHands, read_lines
    if args.players:
        from host_tools.sim.hand_players import Parlour
        Parlour(sim.table, seed="serve:%s" % args.seed)
    say = (lambda text: print(json.dumps({"practice": text}), flush=True)) if args.json else \
        (lambda text: print(text, flush=True))
    hands = PracticeHands(sim.table, say)
    threading.Thread(target=read_lines, args=(sys.stdin, hands, done), name="serve-stdin",
                     daemon=True).start()


def cmd_current_hand(args):
    return common.answer(args, "hand", _human_current_hand)


def cmd_start(args):
    """Start a table cycle: after `clear` of a fault that stopped the table
    at boot (power_lost), or to build the walls now."""
    return common.answer(args, "start", lambda o: console().print(t("msg.started")))


def cmd_clear(args):
    return common.answer(args, "clear", lambda o: console().print(
        t("msg.cleared", code=o["cleared"], name=common.fault_name(o["cleared"]))
        if o["cleared"] else t("msg.no_fault")))


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


def _human_current_hand(out):
    c = console()
    if not out.get("active"):
        c.print(t("svc.no_hand"))
        return
    marker = out.get("marker")
    c.print(t("svc.hand", phase="[bold]%s[/]" % word("phase", out["phase"]), wall=out["wall"],
              reserve=out["reserve"], drawable=out["drawable"], gold=out.get("gold") or "-"))
    c.print(t("svc.hand.stacks", marker=_stack(marker), head=_stack(out.get("head")),
              tail=_stack(out.get("tail")), seat=out["turn"], n=out["n"]))


def _stack(pair):
    return "-" if pair is None else t("svc.stack", seat=pair[0], stack=pair[1])


# -- the commands' arguments -------------------------------------------------

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
    p.add_argument("--players", action="store_true", help=t("help.opt_players"))
    p.add_argument("--speed", type=float, default=1.0, metavar="X", help=t("help.opt_speed"))


def add_start(sub):
    command(sub, "start", cmd_start, t("help.start"), False, "mjctl --port /dev/ttyACM0 start")


def add_clear(sub):
    command(sub, "clear", cmd_clear, t("help.clear"), False, "mjctl --port /dev/ttyACM0 clear")
