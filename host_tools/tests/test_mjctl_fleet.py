"""`mjctl fleet` as a script runs it (docs/fleet.md): three virtual tables
with the project's broker for a span of virtual time, one JSON object of
what the dashboard's read-only user saw; and `mjctl fleet` with no fleet
running says so."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MJCTL = [sys.executable, "-m", "host_tools.cli.mjctl"]


def mjctl(*args, timeout=300):
    return subprocess.run(MJCTL + list(args), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_sim_fleet_json_gives_the_broker_and_every_table():
    p = mjctl("--sim", "--tables", "3", "fleet", "--seconds", "40", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["broker"]["version"].count(".") == 2, out["broker"]
    assert isinstance(out["broker"]["port"], int) and out["broker"]["port"] > 0
    assert [tb["id"] for tb in out["tables"]] == ["t1", "t2", "t3"]
    for tb in out["tables"]:
        assert tb["online"] is True, tb
        assert tb["state"] in ("idle", "building", "lifting", "dealer", "rolling", "in_hand",
                               "fault"), tb
        assert isinstance(tb["hands"], int) and isinstance(tb["faults"], dict)
        # 40 virtual seconds: health and counters at 0, 10, 20, 30, 40 s at least
        assert tb["messages"] >= 13, tb
        assert tb["counters"]["cycles"] >= 0
    assert out["messages"] == sum(tb["messages"] for tb in out["tables"])
    assert out["seconds"] == 40.0


def test_fleet_without_a_running_fleet_says_how_to_start_one(tmp_path):
    p = mjctl("fleet", "--broker", "127.0.0.1:1", "--user-file", str(tmp_path / "none.json"))
    assert p.returncode == 3, (p.returncode, p.stderr)
    assert "make fleet" in p.stderr


def test_tables_needs_sim():
    p = mjctl("--tables", "3", "fleet")
    assert p.returncode == 1 and "--sim" in p.stderr


def test_the_days_csv_equals_the_virtual_tables_own_counters(tmp_path):
    """Two virtual tables for 200 virtual seconds (a hand each, a fault
    at half their sets of walls), their figures kept in a store: the
    day's CSV from `mjctl fleet --day D --csv` gives each table its hands
    and faults as its counters say (fresh tables: their counters are the
    day's)."""
    import csv
    import io
    import time
    from host_tools.texts import en
    store = str(tmp_path / "days.sqlite")
    first = time.strftime("%Y-%m-%d")
    p = mjctl("--sim", "--tables", "2", "--seed", "2", "fleet", "--seconds", "200",
              "--fault-rate", "0.5", "--store", store, "--json")
    assert p.returncode == 0, p.stderr
    counters = {tb["id"]: tb["counters"] for tb in json.loads(p.stdout)["tables"]}
    got = {}
    for day in sorted({first, time.strftime("%Y-%m-%d")}):      # a run across midnight
        q = mjctl("fleet", "--day", day, "--csv", "--store", store)
        assert q.returncode == 0, q.stderr
        lines = list(csv.reader(io.StringIO(q.stdout)))
        assert lines[0] == en.TEXTS["fleet.csv_header"].split(",")
        for line in lines[1:]:
            h, f = got.get(line[2], (0, 0))
            got[line[2]] = (h + int(line[3]), f + int(line[5]))
    want = {tid: (c["hands"], sum(n for _, n in c["faults"])) for tid, c in counters.items()}
    assert got == want
    assert sum(h for h, _ in want.values()) >= 1 and sum(f for _, f in want.values()) >= 1, want
