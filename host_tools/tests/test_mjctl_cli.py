"""mjctl as a technician meets it: arguments that cannot move the wrong
thing, one line and a documented exit code for every mistake, Ctrl-C that
stops what a command started, and the esptool/mpremote habits (--version,
ports, --port auto, MJCTL_PORT, monitor, start, config get KEY.NAME, log).

One virtual table serves the module (`mjctl --sim --key FILE serve`); most
calls run mjctl's main() in this process (fast), the Ctrl-C ones run it as
a process and send it SIGINT when its output says it is at that step."""

import json
import os
import pty
import signal
import subprocess
import sys
import threading

import pytest

from host_tools.link import mux as linkmux

from host_tools.cli import mjctl, selftest
from host_tools.link.client import LinkClient, service_entry
from host_tools.cli.service import jog_arguments

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


# -- 1. jog: every argument named and checked, nothing assumed --------------------

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
    assert code == 2 and "lifter 1 is already at its down switch" in err[-1]
    code, out, err = run(capsys, "--port", link, "log", "--json")
    service = json.loads(out)["service"]
    assert service[0]["what"] == "closed: by the host"                  # newest first
    assert service[1]["actuator"] == "lift_down" and service[1]["outcome"] == "refused"
    lane = [e for e in service if e.get("actuator") == "lane"][0]
    assert (lane["n"], lane["ms"], lane["outcome"]) == (2, 100, "ok")
    code, out, err = run(capsys, "--port", link, "log")
    assert code == 0 and "jog lane 2 100 ms: done" in out and "newest first" in out
    assert "None" not in out and "[" not in out


# -- 2. the bad-input matrix: one line, the documented code, nothing moved --------

@pytest.fixture
def silent_pty():
    """A serial port that answers nothing (a pty nobody serves)."""
    master, slave = pty.openpty()
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)


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


# -- 6. what esptool and mpremote users expect ------------------------------------

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


# -- what a technician reads first, and how he may type it ---------------------------

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
