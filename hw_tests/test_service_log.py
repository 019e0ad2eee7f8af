"""The service log on the frozen firmware: every action of a session in it
(the dice test too, one entry a session), dated by the PC's clock the
session gave at its login, the last 200 kept in a file of fixed size
across a power cut; `mjctl log` shows them in words."""

import time

import pytest

from host_tools.cli import logs
from host_tools.link.client import LinkError, service_entry

_SLOTS = 200
_FILE_BYTES = 200 * 96


@pytest.mark.needs_sim
def test_a_sessions_actions_are_logged_with_the_pcs_time_and_outlive_a_power_cut(target):
    before = int(time.time())
    session = target.link.open_service(target.sim.key)
    assert target.request("jog", session=session, actuator="lane", n=0, ms=100)["ok"]
    for _ in range(3):
        assert target.request("dice_test", session=session, n=500)["counts"]
    target.link.close_service(session)
    after = int(time.time())
    bare = target.link.open_service(target.sim.key, clock=False)    # no PC time given
    target.link.close_service(bare)
    t_cut = target.in_table(lambda: target.table.now)
    target.in_table(target.table.power_cut)
    target.link.close()                       # the link's pty outlives the board's restart
    target.link = target.connect(target.sim.link_path)
    target._hello()
    assert target.sim.restarts == 1                    # the firmware started again
    got = [service_entry(e) for e in target.link.service_log()]
    assert [e["what"] for e in got] == ["opened", "jog", "dice_test", "closed: by the host",
                                        "opened", "closed: by the host"], got
    assert all(e["clock"] == "utc" and before <= e["t"] <= after + 1 for e in got[:4]), got
    assert got[2]["rolls"] == 1500 and got[1]["outcome"] == "ok"
    # Uptimes of the board before the cut: a request that wakes the loop is
    # handled at the end of the tick it sleeps (firmware/hal/sim.py,
    # sleep_until), so the firmware's clock may be a tick ahead of the table's.
    assert [e["clock"] for e in got[4:]] == ["up", "up"], got
    assert got[4]["t"] <= got[5]["t"] <= t_cut + target.timing("tick_ms"), got
    assert len(target.sim.stored("service.log")) <= _FILE_BYTES
    text = [logs.service_text(e) for e in got]
    assert text[2] == "dice test, 1500 rolls: done" and text[1] == "jog lane 0 100 ms: done"
    assert logs.entry_time(got[4]).startswith("up ")
    assert logs.entry_time(got[0]) == time.strftime("%Y-%m-%d %H:%M:%S",
                                                    time.localtime(got[0]["t"]))


@pytest.mark.needs_sim
def test_the_log_keeps_the_last_200_entries_in_a_file_that_does_not_grow(target):
    session = target.link.open_service(target.sim.key)
    for ms in range(1, 231):                  # refused jogs: each one entry, nothing moves
        with pytest.raises(LinkError) as refused:
            target.request("jog", session=session, actuator="lift_up", ms=ms)
        assert refused.value.code == "bad_request", refused.value
    got = [service_entry(e) for e in target.link.service_log()]
    assert len(got) == _SLOTS and [e["ms"] for e in got] == list(range(31, 231)), got[:3]
    assert all(e["outcome"] == "bad_request" for e in got)
    assert len(target.sim.stored("service.log")) == _FILE_BYTES
