"""Ctrl-C or a kill at the virtual board's prompt (before it is powered
on): one line, exit 130, no traceback, and its MicroPython gone with it."""

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _wait_for_prompt(p):
    # The prompt has no newline: read what comes until it shows.
    deadline = time.monotonic() + 30
    seen = b""
    while b"Enter" not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([p.stdout], [], [], 0.5)
        if ready:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
    assert b"Enter" in seen, seen


def test_ctrl_c_at_the_prompt_stops_it_in_one_line(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "host_tools.sim.vboard", "--folder", str(tmp_path)],
                         cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    _wait_for_prompt(p)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    err = err.decode()
    lines = [line for line in err.splitlines() if line]
    assert p.returncode == 130, (p.returncode, err)
    assert len(lines) == 1 and lines[0].startswith("vboard: ") and "Ctrl-C" in lines[0], lines
    assert "Traceback" not in err


def test_a_kill_at_the_prompt_leaves_no_micropython_behind(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "host_tools.sim.vboard", "--folder", str(tmp_path)],
                         cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    _wait_for_prompt(p)
    flash = str(tmp_path)
    assert _micropythons_of(flash), "the virtual board's MicroPython did not start"
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    assert p.returncode == 130
    deadline = time.monotonic() + 10
    while _micropythons_of(flash) and time.monotonic() < deadline:
        time.sleep(0.1)                  # a process's exit, not the virtual table
    assert not _micropythons_of(flash)


def _micropythons_of(flash):
    """The MicroPython processes that run from this flash folder."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
            cmd = open("/proc/%s/cmdline" % pid, "rb").read()
        except OSError:
            continue
        if cwd == flash and b"micropython" in cmd:
            out.append(int(pid))
    return out
