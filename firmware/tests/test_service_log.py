"""The service log (firmware/link/session.py, service.py) on both
interpreters: a file of what sessions did, its last 16 entries kept
across a restart, each act logged as it ended, read in pages that fit a
frame."""

from firmware.link import service as s
from firmware.link import session
from firmware.tests.service_helpers import KEY, _Ctl, _Link, _cleaned, _log, _refused


@_cleaned
def test_the_log_keeps_the_last_16_entries_across_a_restart():
    link = _Link(KEY)
    for t in range(20):
        session.note_act(link, t, "rfid_scan", {}, "ok")
    assert [e[0] for e in _log(link)] == list(range(4, 20))
    again = _Link(KEY, fresh=False)         # a restarted link: the file is still there
    assert [e[0] for e in _log(again)] == list(range(4, 20))


@_cleaned
def test_a_jog_that_went_and_one_the_table_refused_are_logged_as_such():
    link = _Link(KEY)
    session.note_act(link, 5, "jog", {"actuator": "lift_down", "n": 3, "ms": 1500}, "ok")
    session.note_act(link, 6, "jog", {"actuator": "plate", "ms": 2000}, "refused")
    session.note_act(link, 7, "rfid_scan", {}, "ok")
    session.note_act(link, 8, "rfid_audit", {}, "refused")
    assert _log(link) == [[5, "jog", "lift_down", 3, 1500, "ok"],
                          [6, "jog", "plate", None, 2000, "refused"],
                          [7, "rfid_scan", "ok"], [8, "rfid_audit", "refused"]]


@_cleaned
def test_the_service_log_is_read_in_pages_that_fit_a_frame():
    link = _Link(KEY)
    for t in range(10):
        session.note_act(link, t, "rfid_scan", {}, "ok")
    page = s.answer(link, _Ctl(), 20, "service_log", {"start": 8})
    assert page["entries"] == [[8, "rfid_scan", "ok"], [9, "rfid_scan", "ok"]]
    assert page["total"] == 10 and page["counts"] == []
    assert len(s.answer(link, _Ctl(), 20, "service_log", {})["entries"]) == 4
    assert s.answer(link, _Ctl(), 20, "service_log", {"start": 1 << 40})["entries"] == []
    assert _refused(s.answer, link, _Ctl(), 20, "service_log", {"n": 5})[0] == "bad_request"
