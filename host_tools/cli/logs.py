"""mjctl's commands that read what the controller keeps across restarts
(docs/technician.md); none needs the key.

    mjctl --port DEV log [--json]         the fault log and the service log
    mjctl --port DEV counters [--json]    cycles, hands, lifts, tiles fed, faults by code

Both logs are the controller's own, newest first. A fault's time is ms
since the boot it came in; a service entry's is the PC's clock when the
session that wrote it gave it (mjctl always does), else ms since the
controller's start, marked so.
"""

import time


from firmware.link.codec import LinkError
from host_tools.link.client import service_entry
from host_tools.texts import fault_texts, word
from host_tools.cli.common import (answer, command, console, emit, fault_name, on_table, plain,
                                   seconds, t)


def cmd_log(args):
    """The fault log and the service log, newest first; the service log's
    entries carry what was moved or changed and how it ended, and what
    hosts without the key asked is counted by kind. Both logs are kept
    across the controller's restarts: a fault's time is the controller's
    (ms since the boot it came in), a service entry's the PC's clock its
    session gave, or the controller's, marked."""
    def run(link, _key):
        faults = link.request("faults")["faults"]          # newest first already
        counts = {}
        service = link.service_log(counts=counts)          # oldest first: turned
        try:
            by_code = link.request("counters")["faults"]
        except LinkError:          # stopped at boot: the counters are not there
            by_code = []
        out = {"faults": faults,
               "faults_by_code": [{"code": c, "name": fault_name(c), "count": n}
                                  for c, n in by_code],
               "service": [service_entry(e) for e in reversed(service)],
               "keyless": counts}
        emit(args, out, _human_log)
        return 0
    return on_table(args, run)


def cmd_counters(args):
    return answer(args, "counters", _human_counters)


# -- output ------------------------------------------------------------------

def _human_log(out):
    c = console()
    c.print("[bold]%s[/]" % t("label.faults_newest", n=len(out["faults"])))
    for f in out["faults"]:
        name, cause, fix = fault_texts(f["code"])
        c.print(t("msg.log_fault", at=seconds(f["t"]), code=f["code"], name=name,
                  detail=plain(f.get("detail") or {})), highlight=False)
        c.print("    %s: %s" % (t("label.cause"), cause), highlight=False)
        c.print("    %s: %s" % (t("label.fix"), fix), highlight=False)
    if out["faults_by_code"]:
        c.print("[bold]%s[/]" % t("label.faults_by_code"))
        for f in out["faults_by_code"]:
            c.print(t("msg.fault_count", code=f["code"], name=f["name"], n=f["count"]),
                    highlight=False)
    c.print("[bold]%s[/]" % t("label.service_newest", n=len(out["service"])))
    ups = False
    for e in out["service"]:
        ups = ups or e["clock"] == "up"
        c.print("  %s  %s" % (entry_time(e), service_text(e)), highlight=False)
    if ups:
        c.print("  " + t("svclog.up_note"), highlight=False)
    if out["keyless"]:
        c.print("[bold]%s[/] %s" % (t("label.keyless"), ", ".join(
            "%s %d" % (word("keyless", k), n) for k, n in sorted(out["keyless"].items()))),
            highlight=False)


def entry_time(e):
    """A service entry's time as a technician reads it: the PC's clock in
    this PC's time zone, or the controller's since its start, marked."""
    if e["clock"] == "utc":
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(e["t"]))
    if e["clock"] == "up":
        return t("svclog.up", at=seconds(e["t"]))
    return "-"


def service_text(e):
    """A service log entry in words: what, on which actuator or key, the
    value, and how it ended. Names the controller wrote that this host has
    no words for (an actuator a wrong request named) are shown as written."""
    outcome = e.get("outcome")
    end = "" if outcome is None else t("punct.colon") + (
        t("svclog.done") if outcome == "ok" else word("error", outcome))
    what = e["what"]
    if what == "jog":
        target = word("label", e["actuator"]) if e.get("actuator") else "?"
        if e.get("n") is not None and e.get("actuator") != "plate":
            target += " %s" % e["n"]
        return t("msg.log_jog", target=target, ms=e["ms"]) + end
    if what == "config_set":
        return t("msg.log_config", name=e["key"], value=plain(e["value"])) + end
    if what == "dice_test":
        return t("svclog.dice_test", n=e["rolls"]) + end
    if what in ("rfid_scan", "rfid_audit", "rfid_learn", "new_game", "damaged"):
        return t("svclog." + what) + end
    if what == "opened":
        return t("svclog.opened")
    if isinstance(what, str) and what.startswith("closed: "):
        return t("svclog.closed", reason=word("svclog.why", what[len("closed: "):]))
    if what == "rejected":
        return t("svclog.rejected", op=e.get("op"), why=word("svclog.why", e.get("why")))
    if what == "alarm":
        return t("svclog.alarm", n=e.get("n"))
    return str(what) + end


def _human_counters(o):
    c = console()
    c.print(t("msg.counters", cycles=o["cycles"], hands=o["hands"], lifts=o["lifts"],
              fed=plain(o["tiles_fed"])), highlight=False)
    for code, n in o["faults"]:
        c.print(t("msg.fault_count", code=code, name=fault_name(code), n=n), highlight=False)


# -- the commands' arguments -------------------------------------------------

def add_log(sub):
    command(sub, "log", cmd_log, t("help.log"), False, "mjctl --port /dev/ttyACM0 log")


def add_counters(sub):
    command(sub, "counters", cmd_counters, t("help.counters"), False,
            "mjctl --port /dev/ttyACM0 counters")
