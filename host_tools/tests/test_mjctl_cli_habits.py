"""mjctl and the esptool/mpremote habits a technician brings: --version and
help with an example, --lang zh, plain status values, ports, --port auto,
MJCTL_PORT, monitor, start, config get KEY.NAME, new-game
(mjctl_cli_helpers.py serves the virtual table)."""

import json
import subprocess

import pytest

from host_tools.cli import mjctl
from host_tools.link import mux as linkmux
from host_tools.link.client import LinkClient
from host_tools.tests.mjctl_cli_helpers import (  # noqa: F401  (table, silent_pty: fixtures)
    MJCTL, ROOT, run, silent_pty, table)


# -- what esptool and mpremote users expect ---------------------------------------

def test_version_and_help_with_a_description_and_an_example_for_each_command(capsys):
    with pytest.raises(SystemExit) as e:
        mjctl.main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("mjctl 0.1.0 (link protocol ")
    ap = mjctl.parser()
    sub = [a for a in ap._actions if isinstance(a, mjctl.argparse._SubParsersAction)][0]
    assert {"ports", "monitor", "start"} <= set(sub.choices)
    for name, p in sub.choices.items():
        text = p.format_help()
        assert p.description and "example:" in text and "mjctl " in text.split("example:")[1], name
    assert "exit codes" in ap.format_help()


def test_lang_zh_gives_the_line_in_chinese(table, capsys):
    link, key = table
    code, _, err = run(capsys, "--lang", "zh", "--port", link, "--key", key, "jog", "lane", "1")
    assert code == 1 and "需要两个数字" in err[-1]
    code, out, _ = run(capsys, "--lang", "zh", "--port", link, "status")
    assert code == 0 and "状态" in out and "空闲" in out


def test_status_shows_plain_values_and_units(table, capsys):
    link, _ = table
    code, out, _ = run(capsys, "--port", link, "status")
    assert code == 0 and "None" not in out and "[" not in out and "'" not in out
    uptime = [line for line in out.splitlines() if line.strip().startswith("uptime")][0]
    assert uptime.rstrip().endswith((" s", " min", " h")) or " min " in uptime, uptime


def test_mjctl_port_is_the_default_port(table, capsys, monkeypatch):
    link, _ = table
    monkeypatch.setenv("MJCTL_PORT", link)
    code, out, _ = run(capsys, "status", "--json")
    assert code == 0 and json.loads(out)["state"] == "idle"


class _Port:
    def __init__(self, device, description="n/a"):
        self.device, self.description = device, description


def test_ports_marks_the_controllers_and_auto_finds_the_one(table, capsys, monkeypatch,
                                                           silent_pty):
    from serial.tools import list_ports
    link, _ = table
    monkeypatch.setattr(list_ports, "comports", lambda: [_Port(silent_pty, "USB serial"),
                                                         _Port(link)])
    code, out, _ = run(capsys, "ports", "--json")
    ports = {p["device"]: p for p in json.loads(out)["ports"]}
    assert code == 0 and ports[link]["controller"] and ports[link]["build"].startswith("image-")
    assert ports[link]["table"] and not ports[silent_pty]["controller"]
    code, out, _ = run(capsys, "ports")
    assert "controller: table" in out and "USB serial" in out
    code, out, _ = run(capsys, "--port", "auto", "status", "--json")
    assert code == 0 and json.loads(out)["state"] == "idle"
    monkeypatch.delenv("MJCTL_PORT", raising=False)     # no --port at all: found, and said
    code, out, err = run(capsys, "status", "--json")
    assert code == 0 and json.loads(out)["state"] == "idle"
    assert err == ["mjctl: %s: the one controller on this PC's serial ports (table %s)"
                   % (link, ports[link]["table"])], err
    monkeypatch.setattr(list_ports, "comports", lambda: [_Port(silent_pty)])
    code, _, err = run(capsys, "--port", "auto", "status")
    assert code == 3 and "no serial port answered as a controller" in err[-1]


def test_config_get_takes_every_key_config_set_takes(table, capsys):
    link, key = table
    code, out, _ = run(capsys, "--port", link, "config", "get", "timings.lift_up_ms", "--json")
    assert code == 0 and json.loads(out) == {"key": "timings.lift_up_ms", "value": 4000}
    code, out, _ = run(capsys, "--port", link, "config", "get", "timings.lift_up_ms")
    assert out.strip() == "timings.lift_up_ms = 4000"
    code, out, _ = run(capsys, "--port", link, "config", "get", "timings")
    assert "timings.lift_down_ms = " in out and "[" not in out


def test_monitor_streams_events_as_plain_lines(table):
    from host_tools.cli.watch import follow_events
    import io
    link, key = table
    out = io.StringIO()
    with LinkClient(linkmux.shared(link)) as c:
        c.hello()
        session = c.open_service(open(key, "rb").read())
        c.request("jog", session=session, actuator="lane", n=0, ms=50)
        follow_events(c, False, 2, out)          # the jog, then its end
        c.close_service(session)
    lines = out.getvalue().splitlines()
    assert "jog" in lines[0] and "name=lane" in lines[0] and "jogged" in lines[1], lines


def test_start_and_the_makefile_run_arguments():
    p = subprocess.run(MJCTL + ["--sim", "start", "--json"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and json.loads(p.stdout) == {"state": "building"}, p.stderr
    p = subprocess.run(["make", "-n", "run", 'ARGS=--seed 3 --fault lane_jam:1'], cwd=ROOT,
                       capture_output=True, text=True, timeout=30)
    assert "host_tools.view.tableview --seed 3 --fault lane_jam:1" in p.stdout, p.stdout


def test_new_game_as_typed_draws_a_first_dealer_in_both_languages():
    # A fresh virtual table is idle: between hands, so a new game begins
    # (a service session, with the virtual table's own key under --sim).
    p = subprocess.run(MJCTL + ["--sim", "new-game", "--json"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert list(out) == ["dealer"] and out["dealer"] in (0, 1, 2, 3), out
    p = subprocess.run(MJCTL + ["--sim", "new-game"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "a new game: the first dealer is seat " in p.stdout, p
    assert p.stdout.strip().endswith(", streak 0"), p.stdout
    p = subprocess.run(MJCTL + ["--lang", "zh", "--sim", "new-game"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "新的一场：首局庄家 " in p.stdout, p
    p = subprocess.run(MJCTL + ["new-game", "--help"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0 and "the first dealer drawn again" in p.stdout, p
    assert "--key keys/table-7.key new-game" in p.stdout, p.stdout


# -- what a technician reads first, and how he may type it -----------------------

def test_options_may_follow_the_command(table, capsys):
    link, key = table
    code, out, err = run(capsys, "jog", "lane", "1", "100", "--port", link, "--key", key,
                         "--json")
    assert code == 0 and json.loads(out)["end"] == "time", err
    try:
        code, out, err = run(capsys, "status", "--json", "--port=" + link, "--lang", "zh")
    finally:
        from host_tools import texts
        texts.set_lang("en")             # --lang holds for the process: not for the next test
    assert code == 0 and json.loads(out)["state"] == "idle", err


def test_status_puts_an_active_fault_first_with_its_phase_and_wraps_under_the_text(capsys,
                                                                                    monkeypatch):
    from host_tools import texts
    from host_tools.cli import watch
    monkeypatch.setenv("COLUMNS", "60")
    out = {"state": "fault", "phase": "checking", "uptime": 6200, "tiles_per_side": [0] * 4,
           "lanes": [8, 0, 9, 11], "lifters": ["bottom"] * 4, "cycles": 0, "dealer": 2,
           "fault": {"code": 10, "name": "lane_jam", "detail": {"lane": 1, "count": 0}}}
    for lang, phase in (("en", "stopped by a fault"), ("zh", "故障停机")):
        texts.set_lang(lang)
        try:
            capsys.readouterr()
            watch.human_status(out)
            lines = capsys.readouterr().out.splitlines()
        finally:
            texts.set_lang("en")
        assert lines[0].startswith("fault 10") or lines[0].startswith("故障 10"), lines
        cause = [i for i, line in enumerate(lines) if line.lstrip().startswith(("cause", "原因"))][0]
        assert lines[cause + 1].startswith("         "), lines     # under the text, not column 0
        assert any(phase in line for line in lines), lines
