"""mjctl as a technician runs it: the commands of docs/technician.md, as processes."""

import json
import os
import signal
import subprocess
import sys

from firmware.link import codec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MJCTL = [sys.executable, "-m", "host_tools.cli.mjctl"]


def mjctl(*args, timeout=60):
    return subprocess.run(MJCTL + list(args), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_cycle_json_prints_one_object_with_the_figures():
    p = mjctl("--sim", "--seed", "4", "cycle", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert set(out) >= {"ok", "table_time_s", "lower_bound_s", "dice", "dealer", "walls", "faults"}
    assert out["ok"] is True and out["faults"] == []
    assert out["walls"]["tiles_per_side"] == [36, 36, 36, 36]
    assert out["lower_bound_s"] <= out["table_time_s"] <= 1.10 * out["lower_bound_s"]
    assert all(1 <= d <= 6 for d in out["dice"]) and out["dealer"] in (0, 1, 2, 3)


def test_cycle_with_a_missing_tile_names_it_and_fails():
    p = mjctl("--sim", "--seed", "4", "--fault", "missing_tile:7s", "cycle", "--json")
    assert p.returncode == 1
    out = json.loads(p.stdout)
    assert out["ok"] is False and out["dice"] is None
    (fault,) = out["faults"]
    assert fault["name"] == "missing_tile" and fault["detail"]["tiles"] == ["7s"]
    assert fault["cause"] and fault["fix"]


def test_bad_arguments_are_refused_clearly():
    # Exit 1: a wrong call or input (docs/technician.md, Exit codes).
    p = mjctl("--sim", "--fault", "lane_jam:9", "cycle", "--json")
    assert p.returncode == 1 and "lane_jam" in p.stderr
    p = mjctl("--port", "/dev/null", "--fault", "plate_stall", "status")
    assert p.returncode == 1 and "--sim" in p.stderr
    p = mjctl("--port", "/dev/null", "cycle")
    assert p.returncode == 1 and "add --sim" in p.stderr


def test_serve_gives_a_link_that_status_answers_and_stops_on_ctrl_c():
    serve = subprocess.Popen(MJCTL + ["--sim", "--seed", "2", "serve", "--json"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        link = json.loads(serve.stdout.readline())["link"]
        p = mjctl("--port", link, "status", "--json", timeout=30)
        assert p.returncode == 0, p.stderr
        st = json.loads(p.stdout)
        assert st["state"] == "idle" and st["proto"] == codec.PROTO_VERSION
        assert st["build"].startswith("image-")          # frozen into the twin
        assert st["runtime"] == {"bits": 32, "frozen": True, "micropython": "1.28.0", "port": "unix",
                                 "chip": None, "entropy": "seeded"}
        p = mjctl("--port", link, "status", timeout=30)       # the human table
        assert p.returncode == 0 and "idle" in p.stdout
    finally:
        serve.send_signal(signal.SIGINT)
        rc = serve.wait(timeout=15)
    assert rc == 0 and "Traceback" not in serve.stderr.read()


def test_service_commands_over_a_port_with_the_tables_key(tmp_path):
    """A technician's laptop: the table (served virtual, with the key file
    the deploy made) and mjctl over its link: jog with the key, refused
    without it or with another, then log and hand."""
    key = tmp_path / "table.key"
    key.write_bytes(bytes(range(32)))
    other = tmp_path / "other.key"
    other.write_bytes(b"\x01" * 32)
    serve = subprocess.Popen(MJCTL + ["--sim", "--seed", "3", "--key", str(key), "serve",
                                      "--json"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        link = json.loads(serve.stdout.readline())["link"]
        p = mjctl("--port", link, "--key", str(key), "jog", "plate", "300", "--json", timeout=30)
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        assert 300 <= got.pop("ran_ms") <= 320 and got.pop("count") >= 0, p.stdout
        assert got == {"ok": True, "actuator": "plate", "ms": 300, "end": "time"}
        p = mjctl("--port", link, "--key", str(other), "jog", "lane", "1", "200", timeout=30)
        assert p.returncode == 2 and "auth_failed" in p.stderr and "wrong key" in p.stderr
        p = mjctl("--port", link, "jog", "plate", "200", timeout=30)
        assert p.returncode == 1 and "--key" in p.stderr
        p = mjctl("--port", link, "log", "--json", timeout=30)
        assert p.returncode == 0, p.stderr
        got = json.loads(p.stdout)
        what = [e["what"] for e in got["service"]]
        assert what == ["closed: by the host", "jog", "opened"], what        # newest first
        assert got["keyless"]["auth_failed"] == 1             # the wrong key: counted
        p = mjctl("--port", link, "hand", "--json", timeout=30)
        assert p.returncode == 0 and json.loads(p.stdout) == {"active": False}
        p = mjctl("--port", link, "log", timeout=30)               # the human form
        assert p.returncode == 0 and "opened" in p.stdout
        p = mjctl("--port", link, "clear", "--json", timeout=30)
        assert p.returncode == 0 and json.loads(p.stdout) == {"cleared": None}
        p = mjctl("--port", link, "live", "--count", "2", "--every", "0.05", "--json", timeout=30)
        snaps = [json.loads(line) for line in p.stdout.splitlines()]
        assert p.returncode == 0 and len(snaps) == 2, p.stderr
        assert snaps[0]["state"] == "idle" and snaps[1]["uptime"] > snaps[0]["uptime"]
        assert snaps[1]["sensors"]["moving"] == ["bottom"] * 4
    finally:
        serve.send_signal(signal.SIGINT)
        rc = serve.wait(timeout=15)
    assert rc == 0 and "Traceback" not in serve.stderr.read()


def test_dice_statistics_are_the_chi_square_of_a_fair_die():
    from host_tools.cli.ops import chi2_p_5, dice_stats
    # Table values of the chi-square distribution with 5 degrees of freedom.
    assert abs(chi2_p_5(11.0705) - 0.05) < 1e-5 and abs(chi2_p_5(15.0863) - 0.01) < 1e-5
    assert abs(chi2_p_5(0.5543) - 0.99) < 1e-5
    chi2, p = dice_stats([1000] * 6)
    assert chi2 == 0 and p == 1.0
    chi2, p = dice_stats([1200, 1000, 1000, 1000, 1000, 800])   # a loaded die
    assert chi2 == 80.0 and p < 1e-10


def test_config_validate_checks_a_file_with_the_firmwares_own_checker(tmp_path):
    good = mjctl("--sim", "config", "validate", os.path.join(ROOT, "firmware", "config.json"),
                 timeout=60)
    assert good.returncode == 0 and "valid" in good.stdout
    data = json.loads(open(os.path.join(ROOT, "firmware", "config.json")).read())
    data["timings"]["tick_ms"] = 0
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps(data))
    p = mjctl("--sim", "config", "validate", str(bad), "--json", timeout=60)
    assert p.returncode == 1 and "timings.tick_ms" in json.loads(p.stdout)["error"]


def test_selftest_config_set_and_rfid_audit_as_a_technician_runs_them():
    p = mjctl("--sim", "selftest", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["ok"] is True and len(out["items"]) == 9
    assert out["items"][0]["item"] == "plate" and out["items"][0]["revolutions"] >= 1
    p = mjctl("--sim", "--fault", "lift_stuck:1", "selftest")
    assert p.returncode == 1 and "lifter 1" in p.stdout and "FAIL" in p.stdout
    assert "lift_stuck" in p.stdout and "1 of 9 fail" in p.stdout
    p = mjctl("--sim", "config", "set", "timings.lift_up_ms", "4200", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"key": "timings.lift_up_ms", "value": 4200, "restart": True}
    p = mjctl("--sim", "config", "set", "timings.lift_up_ms", "fast")
    assert p.returncode == 2 and "config_invalid" in p.stderr and "lift_up_ms" in p.stderr
    # An idle table's lanes are empty: nothing read, nothing to audit, so no
    # check failed (exit 0), and it says so.
    p = mjctl("--sim", "rfid", "audit", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"empty": True, "tags": 0}
    p = mjctl("--sim", "--lang", "en", "rfid", "audit")
    assert p.returncode == 0 and "the lanes are empty, nothing to audit" in p.stdout, p.stdout
    p = mjctl("--sim", "rfid", "learn")
    assert p.returncode == 2 and "slot 0 has no tag" in p.stderr


def test_counters_sensors_and_the_dice_test_on_the_virtual_table():
    p = mjctl("--sim", "counters", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"cycles": 0, "hands": 0, "lifts": 0,
                                    "tiles_fed": [0, 0, 0, 0], "faults": [], "unsaved": 0}
    p = mjctl("--sim", "sensors", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["lifters"] == [[0, 1]] * 4 and s["motors"] == [0] * 5
    p = mjctl("--sim", "dice-test", "1200", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["rolls"] == 1200 and sum(d["faces"]) == 2400 and 0 <= d["p"] <= 1 and d["fair"]
    p = mjctl("--sim", "dice-test", "600")                  # the human form: a table
    assert p.returncode == 0 and "chi-square" in p.stdout
