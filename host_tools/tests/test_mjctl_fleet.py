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
