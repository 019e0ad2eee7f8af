"""Ctrl-C at the virtual board's prompt (before it is powered on): one
line, exit 130, no traceback."""

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ctrl_c_at_the_prompt_stops_it_in_one_line(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "host_tools.vboard", "--folder", str(tmp_path)],
                         cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
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
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    err = err.decode()
    lines = [line for line in err.splitlines() if line]
    assert p.returncode == 130, (p.returncode, err)
    assert len(lines) == 1 and lines[0].startswith("vboard: ") and "Ctrl-C" in lines[0], lines
    assert "Traceback" not in err
