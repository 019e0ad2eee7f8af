"""`mjctl jog` reports what the motor did: the time it ran by the
controller's clock, what it counted and why it ended, and that time is the
one the virtual table's own output log shows between the motor's on and
its off. The session stays open until the jog ends, so a jog runs its time.

mjctl runs in this process on the target's link (the harness's client is
closed first: the port is one program's)."""

import re

import pytest

from host_tools import texts
from host_tools.cli import mjctl

TICK_MS = 20               # a jog ends within a control tick of its deadline


@pytest.fixture
def jog(target, tmp_path, capsys, monkeypatch):
    """jog(*words, lang="en") -> (exit code, the printed line) of
    `mjctl --port LINK --key FILE jog WORDS`."""
    key = tmp_path / "table.key"
    key.write_bytes(target.sim.key)
    monkeypatch.setenv("MJCTL_SHARE", "0")        # the pty opened directly, no sharer
    target.link.close()

    def run(*words, lang="en"):
        capsys.readouterr()
        code = mjctl.main(["--lang", lang, "--port", target.sim.link_path, "--key", str(key),
                           "jog"] + list(words))
        out, err = capsys.readouterr()
        return code, " ".join((out + err).split())     # rich wraps at the terminal's width
    yield run
    texts.set_lang("en")                 # mjctl's --lang holds for the process: not for the next test
    target.link = target.connect(target.sim.link_path)   # for the harness's close


def _runs(target, label, since):
    """(on, off) times of each run of the output `label` since `since`."""
    out, on = [], None
    for t, what, value in target.output_changes(since=since):
        if what != label:
            continue
        if value and on is None:
            on = t
        elif not value and on is not None:
            out.append((on, t))
            on = None
    return out


def _ran_ms(line):
    m = re.search(r"ran (\d+) ms of (\d+) ms", line)
    assert m, line
    return int(m.group(1)), int(m.group(2))


@pytest.mark.needs_table
def test_mjctl_jog_prints_the_time_each_motor_really_ran(target, jog):
    cases = [  # words, the output, what the line must say of its end
        (["plate", "2000"], "plate_motor", "its time was up"),
        (["lane", "2", "1500"], "lane_feed:2", "its time was up"),
        (["lift_up", "3", "1500"], "lift_up:3", "its time was up"),
        # 1500 ms up, then down: the bottom switch at 1200 ms (2000 ms for the whole way)
        (["lift_down", "3", "1500"], "lift_down:3", "reached its bottom switch"),
    ]
    for words, label, end in cases:
        since = target.table.now
        code, line = jog(*words)
        assert code == 0, line
        ran, asked = _ran_ms(line)
        assert asked == int(words[-1]) and end in line, line
        runs = _runs(target, label, since)
        assert len(runs) == 1, (words, runs)
        motor_ms = runs[0][1] - runs[0][0]
        assert abs(ran - motor_ms) <= TICK_MS, (line, runs)
        if "time" in end:
            assert asked <= ran <= asked + TICK_MS, line
    assert 1200 - TICK_MS <= ran <= 1200 + TICK_MS, line
    # The plate turned its 2 s: about two revolutions counted, and said.
    assert target.table.plate.revolutions >= 1


@pytest.mark.needs_table
@pytest.mark.table(faults=["lift_stuck:1"])
def test_a_jog_a_fault_stops_says_which_fault_and_when_and_exits_2(target, jog):
    since = target.table.now
    code, line = jog("lift_up", "1", "1500")
    assert code == 2 and "fault 12 lift_stuck stopped it" in line, line
    ran, asked = _ran_ms(line)
    (on, off), = _runs(target, "lift_up:1", since)
    assert asked == 1500 and abs(ran - (off - on)) <= TICK_MS, (line, on, off)
    assert 600 <= ran < 1000, line        # it must leave the bottom within 0.6 s
    code, line = jog("plate", "300", lang="zh")    # refused: stopped by a fault is still
    assert code == 0 and "时间到" in line and "运行" in line, line
    # The same lifter jogged again while its fault stops the table: it
    # stays at the bottom, and the jog says the fault, not a switch.
    since = target.table.now
    code, line = jog("lift_up", "1", "1500")
    assert code == 2 and "fault 12 lift_stuck stopped it" in line, line
    assert 600 <= _ran_ms(line)[0] < 1000, line
    assert target.table.lifters[1].at_bottom, target.table.lifters[1]
