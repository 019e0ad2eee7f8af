"""What a parlour of N virtual tables costs this machine, measured
(docs/fleet.md, Scale):

    python -m host_tools.fleet.measure --tables 40 --seconds 120 [--speed 2] [--json]
    python -m host_tools.fleet.measure --tick-cost [--json]

The fleet of `make fleet` (broker, N tables, dashboard and page) with a
fault at every new set of walls, measured for S wall seconds after a
warm-up:
* messages a second through the broker (what the dashboard received);
* the latency of a fault, from the instant the firmware reports it (its
  link event reaching the table's host process, which the firmware sends
  in the same tick as it queues the MQTT message) to the dashboard's
  subscriber, and to a client of the page's event stream: p50, p99, max;
* the broker's memory (VmRSS from /proc), at the end and at its highest;
* the pace the tables kept (virtual seconds per wall second, from their
  health's uptime) and how often a table the page showed online turned
  offline (none expected);
* the load average.
--tick-cost: one table's firmware run as fast as it goes for 60 virtual
seconds with its telemetry on and off, twice each, alternating: the
firmware process's CPU time per 1000 ticks (the twin on this PC, not the
ESP32: a ratio, not a board's figure).
"""

import argparse
import json
import os
import statistics
import threading
import time
import urllib.request

from host_tools.fleet.fleet import Fleet


def pct(values, p):
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))] * 1000, 1)


class PageClient(threading.Thread):
    """A client of the page's event stream, as a browser is: the arrival of
    each fault on the page, by (table, the fault's table time), and the
    tables it saw go from online to offline."""

    def __init__(self, url):
        threading.Thread.__init__(self, name="page-client", daemon=True)
        self.url = url + "events"
        self.seen = {}
        self.online = {}
        self.offline_turns = []
        self.pushes = 0
        self.stop = False

    def run(self):
        with urllib.request.urlopen(self.url, timeout=30) as r:
            for line in r:
                if self.stop:
                    return
                if not line.startswith(b"data: "):
                    continue
                now = time.monotonic()
                snap = json.loads(line[6:])
                self.pushes += 1
                for tb in snap["tables"]:
                    f = tb["fault"]
                    if f is not None:
                        self.seen.setdefault((tb["id"], f["t"]), now)
                    was = self.online.get(tb["id"])
                    if was and not tb["online"]:
                        self.offline_turns.append((tb["id"], tb["offline"], tb["silent_s"]))
                    self.online[tb["id"]] = tb["online"]


def measure(tables, seconds, speed=2.0, warmup=20.0, log=None):
    arrivals = {}

    def on_fault(tid, payload, now):
        try:
            arrivals.setdefault((tid, json.loads(payload)["t"]), now)
        except (ValueError, KeyError, TypeError):
            pass
    log = log or (lambda s: None)
    with Fleet(tables=tables, speed=speed, fault_rate=1.0, fix_after=20.0,
               on_fault=on_fault) as fleet:
        client = PageClient(fleet.page.url)
        client.start()
        log("fleet of %d at %gx: warming up %g s" % (tables, speed, warmup))
        time.sleep(warmup)             # wall time: the tables connect and settle
        snap0 = fleet.dashboard.snapshot()
        t0 = time.monotonic()
        rss = []
        while time.monotonic() - t0 < seconds:
            rss.append(fleet.broker.rss())
            time.sleep(1.0)
        t1 = time.monotonic()
        snap1 = fleet.dashboard.snapshot()
        load = os.getloadavg()
        time.sleep(2.0)                # the last faults reach the page
        client.stop = True
        faults = [f for f in fleet.faults if t0 <= f[3] <= t1]
    sub, page = [], []
    for tid, _code, t, wall in faults:
        if (tid, t) in arrivals:
            sub.append(arrivals[(tid, t)] - wall)
        if (tid, t) in client.seen:
            page.append(client.seen[(tid, t)] - wall)
    up0 = {tb["id"]: (tb["health"] or {}).get("uptime") for tb in snap0["tables"]}
    pace = []
    for tb in snap1["tables"]:
        a, b = up0.get(tb["id"]), (tb["health"] or {}).get("uptime")
        if a is not None and b is not None:
            pace.append((b - a) / 1000.0 / (t1 - t0))
    rss = [r for r in rss if r]
    return {
        "tables": tables, "speed": speed, "seconds": round(t1 - t0, 1),
        "online_at_end": sum(tb["online"] for tb in snap1["tables"]),
        "messages_per_s": round((snap1["messages"] - snap0["messages"]) / (t1 - t0), 1),
        "faults": len(faults),
        "latency_ms": {
            "subscriber": {"n": len(sub), "p50": pct(sub, 50), "p99": pct(sub, 99),
                           "max": pct(sub, 100)},
            "page": {"n": len(page), "p50": pct(page, 50), "p99": pct(page, 99),
                     "max": pct(page, 100)}},
        "broker_rss_kb": {"end": rss[-1] // 1024 if rss else None,
                          "max": max(rss) // 1024 if rss else None},
        "pace": {"min": round(min(pace), 2) if pace else None,
                 "median": round(statistics.median(pace), 2) if pace else None},
        "offline_turns": client.offline_turns[:10], "offline_turn_count": len(client.offline_turns),
        "page_pushes": client.pushes,
        "loadavg": [round(x, 2) for x in load]}


def tick_cost(virtual_s=60, rounds=2):
    """Firmware CPU ms per 1000 ticks with telemetry on and off."""
    from host_tools.fleet.broker import Broker, table_user
    from host_tools.link.client import LinkClient
    from host_tools.sim.launcher import SimTable
    from host_tools.sim.hand_players import Parlour

    def cpu(pid):
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    out = {"on": [], "off": []}
    with Broker(tables=[("hall", "t1", "pw")]) as b:
        for _ in range(rounds):
            for mode in ("on", "off"):
                sim = SimTable(seed=1)
                if mode == "on":
                    with open(sim.store + "/mqtt.json", "w") as f:
                        json.dump({"host": "127.0.0.1", "port": b.port, "site": "hall",
                                   "table": "t1", "user": table_user("hall", "t1"),
                                   "password": "pw"}, f)
                Parlour(sim.table, seed=1)
                with sim, LinkClient(sim.link_path) as link:
                    link.hello()
                    link.request("start")
                    c0, n0 = cpu(sim.proc.pid), sim.server.ticks
                    while sim.table.now < virtual_s * 1000:
                        link.next_event(timeout=0.2)
                    c1, n1 = cpu(sim.proc.pid), sim.server.ticks
                out[mode].append(1000.0 * (c1 - c0) / (n1 - n0) * 1000)
    on, off = statistics.mean(out["on"]), statistics.mean(out["off"])
    return {"virtual_s": virtual_s, "rounds": rounds,
            "cpu_ms_per_1000_ticks": {"on": [round(x, 1) for x in out["on"]],
                                      "off": [round(x, 1) for x in out["off"]]},
            "telemetry_share": round((on - off) / off, 3) if off else None}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.fleet.measure",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=120.0, help="wall seconds measured")
    ap.add_argument("--speed", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=20.0)
    ap.add_argument("--tick-cost", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.tick_cost:
        out = tick_cost()
    else:
        out = measure(args.tables, args.seconds, args.speed, args.warmup,
                      log=None if args.json else print)
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
