"""What mjctl's command-line tests share (test_mjctl_cli_*.py).

One virtual table serves each test module (`table`: `mjctl --sim --key
FILE serve`); most calls run mjctl's main() in this process (`run`: fast),
and `still` checks that nothing moves once a test is done. `silent_pty`
is a serial port that answers nothing."""

import json
import os
import pty
import signal
import subprocess
import sys

import pytest

from host_tools.cli import mjctl
from host_tools.link import mux as linkmux
from host_tools.link.client import LinkClient


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MJCTL = [sys.executable, "-m", "host_tools.cli.mjctl"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """(link path, key file) of a virtual table served in real time."""
    key = tmp_path_factory.mktemp("keys") / "table.key"
    key.write_bytes(bytes(range(32)))
    serve = subprocess.Popen(MJCTL + ["--sim", "--seed", "3", "--key", str(key), "serve",
                                      "--json"], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        link = json.loads(serve.stdout.readline())["link"]
        yield link, str(key)
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=15)


def run(capsys, *argv, env=None):
    """mjctl's main() here: (exit code, stdout, stderr lines)."""
    capsys.readouterr()
    code = mjctl.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, [line for line in err.splitlines() if line]


def state(link):
    """What moves, and the service log, read over the link (through the
    port's sharer that mjctl started for it: the port is its alone)."""
    with LinkClient(linkmux.shared(link)) as c:
        c.hello()
        s = c.request("sensors")
        return s["motors"], s["moving"], c.service_log()


def still(link):
    motors, moving, _ = state(link)
    assert motors == [0] * 5 and moving == ["bottom"] * 4, (motors, moving)


@pytest.fixture
def silent_pty():
    """A serial port that answers nothing (a pty nobody serves)."""
    master, slave = pty.openpty()
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)
