"""mjctl and the deploy stopped by Ctrl-C at each long step: exit code 130,
one line, the service session closed and every motor off. The Ctrl-C ones
run it as a process and send it SIGINT when its output says it is at that
step (mjctl_cli_helpers.py serves the virtual table)."""

import signal
import subprocess
import sys

import pytest

from host_tools.cli import selftest
from host_tools.link import mux as linkmux
from host_tools.link.client import LinkClient, service_entry
from host_tools.tests.mjctl_cli_helpers import (  # noqa: F401  (table, silent_pty: fixtures)
    MJCTL, ROOT, silent_pty, state, still, table)


# -- Ctrl-C at each long step ------------------------------------------------------

def _interrupt_after(argv, ready, timeout=60, stream="stdout"):
    """Start mjctl, send SIGINT once a line of its output starts with
    `ready`; (exit code, stdout, stderr)."""
    p = subprocess.Popen(MJCTL + argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        for line in getattr(p, stream):
            if line.startswith(ready):
                p.send_signal(signal.SIGINT)
                break
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err


def _assert_interrupted(code, err):
    lines = [line for line in err.splitlines() if line]
    assert code == 130, err
    assert lines[-1].startswith("mjctl: stopped by Ctrl-C"), err
    assert "Traceback" not in err, err


def test_ctrl_c_during_selftest_closes_the_session_and_leaves_every_motor_off(table):
    link, key = table
    code, out, err = _interrupt_after(["--port", link, "--key", key, "selftest"], "lane 1")
    _assert_interrupted(code, err)
    still(link)
    _, _, log = state(link)
    assert service_entry(log[-1])["what"] == "closed: by the host", log[-3:]


class _InterruptAfter:
    """A link that raises KeyboardInterrupt (a Ctrl-C) just after a jog
    request matching `when` was answered: that motor is moving."""

    def __init__(self, link, when):
        self.link, self.when, self.fired = link, when, False

    def request(self, op, **args):
        out = self.link.request(op, **args)
        if op == "jog" and not self.fired and self.when(args):
            self.fired = True
            raise KeyboardInterrupt
        return out

    def __getattr__(self, name):
        return getattr(self.link, name)


def test_an_interrupted_selftest_brings_the_lifter_back_where_it_found_it(table):
    link, key = table
    told = []
    with LinkClient(linkmux.shared(link)) as c:
        c.hello()
        proxy = _InterruptAfter(c, lambda a: a["actuator"] == "lift_up" and a["n"] == 0)
        with pytest.raises(KeyboardInterrupt):
            selftest.run(proxy, open(key, "rb").read(), progress=None,
                         restoring=lambda n, switch: told.append((n, switch)))
        assert proxy.fired and told == [(0, "bottom")]
        assert c.request("sensors")["lifters"][0] == [0, 1]       # at its bottom switch again
        entries = c.service_log()
    entries = [service_entry(e) for e in entries]
    moves = [(e["actuator"], e["n"], e["ms"], e["outcome"]) for e in entries
             if e["what"] == "jog" and e["actuator"].startswith("lift")]
    assert moves[-2:] == [("lift_up", 0, selftest.AWAY_MS, "ok"),
                          ("lift_down", 0, selftest.BACK_MS, "ok")]
    assert entries[-1]["what"] == "closed: by the host"
    still(link)


def test_an_interrupted_plate_jog_stops_when_the_session_closes(table):
    link, key = table
    with LinkClient(linkmux.shared(link)) as c:
        c.hello()
        proxy = _InterruptAfter(c, lambda a: a["actuator"] == "plate")
        with pytest.raises(KeyboardInterrupt):
            selftest.run(proxy, open(key, "rb").read())
        ev = c.wait_event(lambda e: e["ev"] == "jogged", timeout=5)
        assert ev["name"] == "plate" and ev["ms"] < selftest.PLATE_MS and ev["end"] == "closed"
    still(link)


def test_ctrl_c_during_live_and_monitor_exits_130_with_one_line(table):
    link, _ = table
    code, out, err = _interrupt_after(["--port", link, "live", "--json"], "{")
    _assert_interrupted(code, err)
    code, out, err = _interrupt_after(["--port", link, "monitor"], "#")
    _assert_interrupted(code, err)
    still(link)


def test_ctrl_c_during_a_sim_hand_stops_the_virtual_table():
    code, out, err = _interrupt_after(["--sim", "--seed", "4", "hand"], "virtual table seed 4")
    _assert_interrupted(code, err)


def test_ctrl_c_during_a_deploy_says_how_to_finish(tmp_path, silent_pty):
    """The deploy waits for a board that never answers; Ctrl-C ends it with
    one line (the copy is the step a technician interrupts)."""
    p = subprocess.Popen([sys.executable, "-m", "host_tools.image.deploy", "--port", silent_pty,
                          "--out", str(tmp_path / "stage")], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        for line in p.stdout:
            if line.startswith("built "):       # staged: now it talks to the board
                p.send_signal(signal.SIGINT)
                break
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    lines = [line for line in err.splitlines() if line]
    assert p.returncode == 130 and lines == [lines[-1]], err
    assert lines[-1].startswith("deploy: stopped by Ctrl-C; run the deploy again"), err
