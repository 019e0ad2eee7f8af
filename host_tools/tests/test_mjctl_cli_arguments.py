"""mjctl as a technician meets it: arguments that cannot move the wrong
thing, and one line and a documented exit code for every mistake, nothing
moved (mjctl_cli_helpers.py serves the virtual table)."""

import json
import os
import pty
import threading

import pytest

from host_tools.cli import mjctl
from host_tools.cli.service import jog_arguments
from host_tools.tests.mjctl_cli_helpers import (  # noqa: F401  (table, silent_pty: fixtures)
    run, silent_pty, state, still, table)


# -- jog: every argument named and checked, nothing assumed -----------------------

@pytest.mark.parametrize("actuator,words", [
    ("plate", []), ("plate", ["1", "500"]),
    ("lane", []), ("lane", ["1"]), ("lane", ["500"]), ("lane", ["1", "2", "3"]),
    ("lift_up", []), ("lift_up", ["1500"]), ("lift_down", []), ("lift_down", ["1"]),
])
def test_jog_with_an_argument_missing_or_extra_is_refused_before_anything_is_sent(actuator, words):
    with pytest.raises(mjctl.CliError) as e:
        jog_arguments(actuator, words)
    assert e.value.code == 1
    assert ("N MS" in str(e.value)) == (actuator != "plate") and "MS" in str(e.value)


@pytest.mark.parametrize("actuator,words,what", [
    ("plate", ["0"], "1..2000"), ("plate", ["2001"], "1..2000"), ("plate", ["fast"], "1..2000"),
    ("lane", ["4", "500"], "0..3"), ("lane", ["-1", "500"], "0..3"), ("lane", ["x", "500"], "0..3"),
    ("lift_up", ["1", "0"], "1..2000"), ("lift_down", ["1", "99999"], "1..2000"),
])
def test_jog_numbers_out_of_range_are_refused(actuator, words, what):
    with pytest.raises(mjctl.CliError) as e:
        jog_arguments(actuator, words)
    assert e.value.code == 1 and what in str(e.value)


def test_jog_arguments_as_given():
    assert jog_arguments("plate", ["500"]) == (None, 500)
    assert jog_arguments("lane", ["2", "300"]) == (2, 300)
    assert jog_arguments("lift_down", ["3", "2000"]) == (3, 2000)


def test_a_wrong_jog_prints_usage_exits_1_and_opens_no_session(table, capsys):
    link, key = table
    _, _, before = state(link)
    for words in (["lane", "1"], ["lift_up", "1500"], ["lift_down"], ["plate"], ["lane", "9", "500"]):
        code, out, err = run(capsys, "--port", link, "--key", key, "jog", *words)
        assert code == 1 and err[0].startswith("usage: mjctl jog"), err
        assert len(err) == 2 and err[1].startswith("mjctl: "), err
    _, _, after = state(link)
    assert after == before                  # not even a challenge: nothing was sent
    still(link)


def test_a_jog_runs_the_motor_named_and_the_log_says_what_and_how_it_ended(table, capsys):
    link, key = table
    code, out, err = run(capsys, "--port", link, "--key", key, "jog", "lane", "2", "100", "--json")
    got = json.loads(out)
    assert code == 0 and abs(got.pop("ran_ms") - 100) <= 20, out     # waited for its end
    assert got == {"ok": True, "actuator": "lane", "n": 2, "ms": 100, "end": "time", "count": 0}
    code, out, err = run(capsys, "--port", link, "--key", key, "jog", "lift_down", "1", "100")
    assert code == 2 and "lifter 1 is already at its bottom limit switch (refused)" in err[-1], err
    code, out, err = run(capsys, "--port", link, "log", "--json")
    service = json.loads(out)["service"]
    assert service[0]["what"] == "closed: by the host"                  # newest first
    assert service[1]["actuator"] == "lift_down" and service[1]["outcome"] == "refused"
    lane = [e for e in service if e.get("actuator") == "lane"][0]
    assert (lane["n"], lane["ms"], lane["outcome"]) == (2, 100, "ok")
    code, out, err = run(capsys, "--port", link, "log")
    assert code == 0 and "jog lane 2 100 ms: done" in out and "newest first" in out
    assert "None" not in out and "[" not in out


# -- the bad-input matrix: one line, the documented code, nothing moved -----------

@pytest.fixture
def garbage_pty():
    """A serial port that answers everything with garbage."""
    master, slave = pty.openpty()
    stop = threading.Event()

    def babble():
        while not stop.is_set():
            try:
                os.read(master, 256)
                os.write(master, b"\x7e\x00garbage\xff\r\n" * 8)
            except OSError:
                return
    th = threading.Thread(target=babble, daemon=True)
    th.start()
    yield os.ttyname(slave)
    stop.set()
    os.close(slave)
    os.close(master)
    th.join(2)


def test_the_bad_input_matrix(table, capsys, tmp_path, silent_pty, garbage_pty):
    link, key = table
    folder = tmp_path / "keys"
    folder.mkdir()
    short = tmp_path / "short.key"
    short.write_bytes(b"abc")
    locked = tmp_path / "locked.key"
    locked.write_bytes(bytes(32))
    locked.chmod(0)
    unreadable = os.geteuid() != 0          # root reads any file
    cases = [
        (["--port", "/dev/ttyACM9", "status"], 1, "no serial port /dev/ttyACM9"),
        (["--port", "/dev/null", "status"], 1, "cannot use /dev/null as a serial port"),
        (["--port", silent_pty, "status"], 3, "no answer from " + silent_pty),
        (["--port", garbage_pty, "status"], 3, "no answer from " + garbage_pty),
        (["--port", link, "--key", str(tmp_path / "nokey"), "selftest"], 1, "no key file"),
        (["--port", link, "--key", str(folder), "jog", "plate", "100"], 1, "is a folder"),
        (["--port", link, "--key", str(short), "jog", "plate", "100"], 1, "not a table key"),
        (["--port", link, "selftest"], 1, "needs the table's key: add --key FILE"),
        (["--port", link, "new-game"], 1, "new-game needs the table's key: add --key FILE"),
        (["--port", link, "dice-test", "0"], 1, "dice-test rolls 1..100000 times, not 0"),
        (["--port", link, "dice-test", "-5"], 1, "not -5"),
        (["--port", link, "live", "--every", "0"], 1, "--every must be more than 0"),
        (["--port", link, "--key", key, "config", "set", "timings.lift_up_ms"], 1,
         "config set needs a KEY and a VALUE"),
        (["--port", link, "config", "get", "timings.no_such"], 2, "the config has no timings.no_such"),
        (["--port", link, "cycle"], 1, "cycle runs on the virtual table: add --sim"),
        (["--port", link, "--fault", "plate_stall", "status"], 1, "need --sim"),
        (["--port", link, "frobnicate"], 1, "invalid choice"),
        (["status"], 1, "no controller given"),
    ]
    if unreadable:
        cases.append((["--port", link, "--key", str(locked), "selftest"], 1, "permission denied"))
    for argv, want, text in cases:
        try:
            code, out, err = run(capsys, *argv)
        except SystemExit as e:             # argparse's own exits go through Parser.error
            code, (out, err_) = e.code, capsys.readouterr()
            err = [line for line in err_.splitlines() if line]
        assert code == want, (argv, code, err)
        assert err and err[-1].startswith("mjctl: ") and text in err[-1], (argv, err)
        assert not any("Traceback" in line for line in err), (argv, err)
    still(link)
