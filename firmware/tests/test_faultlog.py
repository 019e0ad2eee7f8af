"""The fault log: a ring of the last faults (firmware/logring.py), newest
first, each detail kept by its keys and values."""

from firmware import faults
from firmware.logring import LogRing


def _log(size):
    return LogRing(size, faults.LOG_WIDTH)


def test_the_newest_comes_first_and_the_oldest_leaves():
    log = _log(4)
    assert len(log) == 0
    for k in range(6):
        faults.log(log, 100 + k, 10 + k, {"lane": k})
    assert len(log) == 4
    assert [faults.logged(log, age) for age in range(4)] == [
        (105, 15, {"lane": 5}), (104, 14, {"lane": 4}), (103, 13, {"lane": 3}),
        (102, 12, {"lane": 2})]


def test_a_detail_keeps_its_keys_and_values_and_none_is_empty():
    log = _log(2)
    faults.log(log, 1, 10, {"lane": 2, "count": 7, "sensor": "lane_count"})
    faults.log(log, 2, 30, None)
    assert faults.logged(log, 1) == (1, 10, {"lane": 2, "count": 7, "sensor": "lane_count"})
    assert faults.logged(log, 0) == (2, 30, {})
    faults.log(log, 3, 12, {"side": 1})    # takes the slot of the first: nothing of it is left
    assert faults.logged(log, 0) == (3, 12, {"side": 1})
    assert faults.logged(log, 1) == (2, 30, {})


def test_a_detail_with_more_keys_than_the_log_holds_says_how_many_it_left_out():
    log = _log(1)
    detail = {"k%d" % j: j for j in range(faults.DETAIL_KEYS + 2)}
    faults.log(log, 5, 40, detail)
    got = faults.logged(log, 0)[2]
    assert len(got) == faults.DETAIL_KEYS and got["more"] == 3
    for key in got:
        if key != "more":
            assert got[key] == detail[key]


def test_entries_are_lists_of_their_time_and_the_fields_written():
    ring = LogRing(3, 4)
    for k in range(4):
        at = ring.add(10 * k, 1 + k % 3)
        for j in range(1 + k % 3):
            ring.fields[at + j] = "f%d" % j
    assert [ring.entry(age) for age in range(3)] == [
        [30, "f0"], [20, "f0", "f1", "f2"], [10, "f0", "f1"]]
