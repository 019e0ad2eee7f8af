"""mjctl's commands that show the table as it is now (docs/technician.md),
with `--port DEV` or on the virtual table with `--sim`; none needs the key.

    mjctl --port DEV status [--json]          state, build, runtime, heap, counters
    mjctl --port DEV sensors [--json]         every sensor and output once
    mjctl --port DEV live [--every S] [--count N] [--json]
    mjctl --port DEV monitor [--count N] [--json]

`live` redraws the status and the sensors in place; `monitor` prints the
controller's events as they come, a fault with its cause and fix.
"""

import json
import sys
import time

from firmware.link.codec import LinkError
from host_tools.link import mux as linkmux
from host_tools.link.client import LinkClient
from host_tools.texts import fault_texts, word
from host_tools.cli.common import (EXIT_INPUT, CliError, answer, command, console, emit, fields,
                                   human_fault, lift_text, on_table, plain, seconds, state_text,
                                   t, virtual_table)
from host_tools.cli.ops import describe_fault


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


def cmd_sensors(args):
    return answer(args, "sensors", _human_sensors)


def cmd_live(args):
    """status and sensors every `--every` s, redrawn in place (--json: one
    line per refresh); `--count N` stops after N refreshes, else Ctrl-C
    (exit 130, like any command it stops)."""
    if not args.every > 0:
        raise CliError(EXIT_INPUT, t("err.every", value=args.every), usage=args.parser.format_usage())
    if args.count is not None and args.count < 1:
        raise CliError(EXIT_INPUT, t("err.count", value=args.count), usage=args.parser.format_usage())

    def snapshot(link):
        st = link.request("status")
        se = fields(link.request("sensors"))
        return {"state": st["state"], "phase": st["phase"], "fault": st["fault"],
                "uptime": st["uptime"], "sensors": se}

    def run(link, _key):
        n = 0
        live = None
        if not args.json:
            from rich.live import Live
            live = Live(auto_refresh=False)
            live.start()
        try:
            while args.count is None or n < args.count:
                snap = snapshot(link)
                n += 1
                if live is None:
                    print(json.dumps(snap), flush=True)
                else:
                    live.update(_live_view(snap), refresh=True)
                if args.count is None or n < args.count:
                    time.sleep(args.every)
        finally:
            if live is not None:
                live.stop()
        return 0
    return on_table(args, run)


def cmd_monitor(args):
    """The controller's events and faults as they come, one plain line each
    (tableview's --plain lines; a fault with its cause and fix), until
    Ctrl-C or --count events."""
    def run(link, _key):
        st = link.request("status")
        if not args.json:
            print("# %s" % t("msg.monitor_start", port=args.port or t("label.virtual_table"),
                             state=state_text(st["state"]), uptime=seconds(st["uptime"])),
                  flush=True)
            if st["fault"]:
                for line in monitor_lines(dict(st["fault"], ev="fault", t=st["uptime"])):
                    print(line)
        return follow_events(link, args.json, args.count, sys.stdout)
    return on_table(args, run)


def follow_events(link, as_json, count, out):
    """Print each event as it arrives (count: stop after that many)."""
    n = 0
    while count is None or n < count:
        ev = link.next_event(timeout=None)
        if ev is None:                 # the link closed
            raise LinkError("closed", "the port closed")
        n += 1
        if as_json:
            out.write(json.dumps(ev) + "\n")
        else:
            for line in monitor_lines(ev):
                out.write(line + "\n")
        out.flush()
    return 0


def monitor_lines(ev):
    """An event as tableview's plain lines: `t  name  fields`, and for a
    fault its cause and fix in the chosen language."""
    from host_tools.texts.events import plain_lines
    shown = {k: v for k, v in ev.items() if k not in ("ev", "t")}
    extra = []
    if ev["ev"] == "fault" and "code" in ev:
        _, cause, fix = fault_texts(ev["code"])
        extra = [(t("label.cause"), cause), (t("label.fix"), fix)]
    return plain_lines({"t": ev.get("t", 0), "name": ev["ev"], "host": False, "fields": shown},
                       extra)


# -- output ------------------------------------------------------------------

def human_status(out):
    from rich.table import Table
    c = console()
    tb = Table(show_header=False, box=None)
    dice = out.get("dice")
    phase = word("build", out["phase"]) if out.get("phase") else "-"
    if out.get("fault"):           # the fault first: it is what the technician came for
        human_fault(c, out["fault"])
        phase = t("status.stopped", build=phase)
    rows = [("label.state", state_text(out.get("state"))),
            ("label.phase", phase),
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


def _human_sensors(o):
    c = console()
    on_off = (t("label.off"), t("label.on"))
    c.print(t("msg.sensors_plate", level=o["plate"][0], revs=o["plate"][1],
              motor=on_off[bool(o["motors"][0])]), highlight=False)
    for n, (level, count) in enumerate(o["lanes"]):
        c.print(t("msg.sensors_lane", n=n, level=level, count=count,
                  motor=on_off[bool(o["motors"][1 + n])]), highlight=False)
    for n, (top, bottom) in enumerate(o["lifters"]):
        c.print(t("msg.sensors_lifter", n=n, top=top, bottom=bottom,
                  moving=lift_text(o["moving"][n])), highlight=False)
    c.print(t("msg.sensors_rest", keys=plain(o["keys"]), buzzer=on_off[bool(o["buzzer"])]),
            highlight=False)


def _live_view(snap):
    from rich.table import Table
    se = snap["sensors"]
    fault = snap["fault"]
    table = Table(title=t("live.title", state=word("state", snap["state"]),
                          phase=word("build", snap["phase"]), s=snap["uptime"] / 1000.0)
                  + ("  " + t("live.fault", code=fault["code"], name=fault_texts(fault["code"])[0])
                     if fault else ""))
    table.add_column("")
    table.add_column(t("part.plate"))
    for n in range(4):
        table.add_column(t("part.lane", n=n))
    table.add_row(t("live.motor"), *[t("switch.on") if m else "-" for m in se["motors"]])
    table.add_row(t("live.sensor"), str(se["plate"][0]), *[str(level) for level, _ in se["lanes"]])
    table.add_row(t("live.count"), t("live.rev", n=se["plate"][1]),
                  *[str(count) for _, count in se["lanes"]])
    table.add_row(t("label.lifter"), "", *["%s %s%s" % (word("lift", m), "T" if top else "",
                                                       "B" if bottom else "")
                                          for m, (top, bottom) in zip(se["moving"], se["lifters"])])
    table.add_row(t("live.key"), "", *[str(k) for k in se["keys"]])
    return table


# -- the commands' arguments -------------------------------------------------

def add_status(sub):
    command(sub, "status", cmd_status, t("help.status"), False, "mjctl --port /dev/ttyACM0 status")


def add_sensors(sub):
    command(sub, "sensors", cmd_sensors, t("help.sensors"), False,
            "mjctl --port /dev/ttyACM0 sensors")


def add_live(sub):
    p = command(sub, "live", cmd_live, t("help.live"), False,
                "mjctl --port /dev/ttyACM0 live --every 0.5")
    p.add_argument("--every", type=float, default=0.25, metavar="S", help=t("help.opt_every"))
    p.add_argument("--count", type=int, metavar="N", help=t("help.opt_count"))


def add_monitor(sub):
    p = command(sub, "monitor", cmd_monitor, t("help.monitor"), False,
                "mjctl --port /dev/ttyACM0 monitor")
    p.add_argument("--count", type=int, metavar="N", help=t("help.opt_count_events"))
