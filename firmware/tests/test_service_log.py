"""The service log's ring (firmware/link/service_log.py) on both
interpreters: the last 200 entries in a file of fixed size, kept across a
restart; a record a power cut spoiled reads as damaged and spoils no
other; the PC's time of a session, signed with its login, on its entries
(uptime otherwise, marked); a dice test one entry a session; an entry too
long cut to fit; each act logged as it ended, read in pages that fit a
frame."""

import binascii
import os

from firmware.link import service as s
from firmware.link import service_log, session
from firmware.tests.service_helpers import (KEY, LOG, _Ctl, _Link, _Tech, _cleaned, _hex, _log,
                                            _refused, _send, hmac_sha256)

_SLOTS = 200
_REC = 96


def _size():
    return os.stat(LOG)[6]


@_cleaned
def test_the_log_keeps_the_last_200_entries_in_a_file_of_fixed_size_across_a_restart():
    link = _Link(KEY)
    for t in range(230):
        session.note_act(link, t, "rfid_scan", {}, "ok")
    got = session.entries(link)
    assert len(got) == _SLOTS and _size() == _SLOTS * _REC
    assert [e[0] for e in got] == [["up", t] for t in range(30, 230)]
    assert got[-1] == [["up", 229], "rfid_scan", "ok"]
    again = _Link(KEY, fresh=False)         # a restarted link: the file is still there
    assert session.entries(again) == got
    session.note_act(again, 500, "rfid_audit", {}, "refused")
    assert session.entries(again)[-1] == [["up", 500], "rfid_audit", "refused"]
    assert session.entries(again)[0][0] == ["up", 31] and _size() == _SLOTS * _REC


@_cleaned
def test_a_record_a_power_cut_spoiled_reads_as_damaged_and_is_written_over_next():
    link = _Link(KEY)
    for t in range(5):
        session.note_act(link, t, "rfid_scan", {}, "ok")
    with open(LOG, "r+b") as f:             # the newest record, half written
        f.seek(4 * _REC + 20)
        f.write(b"\x00" * 10)
    again = _Link(KEY, fresh=False)
    got = session.entries(again)
    assert got[:3] == [[["up", t], "rfid_scan", "ok"] for t in range(3)]
    assert got[3] == [["up", 3], "rfid_scan", "ok"] and len(got) == 4   # the newest lost
    session.note_act(again, 9, "rfid_learn", {}, "ok")
    assert session.entries(again)[-1] == [["up", 9], "rfid_learn", "ok"]
    with open(LOG, "r+b") as f:             # an older one spoiled: only it is lost
        f.seek(1 * _REC + 50)
        f.write(b"\xff")
    assert session.entries(again)[1] == [None, "damaged"]
    assert session.entries(again)[2] == [["up", 2], "rfid_scan", "ok"]


def _signed_login(link, now, unix_s, key=KEY):
    nonce = session.challenge(link, now)
    mac = _hex(hmac_sha256(key, binascii.unhexlify(nonce) + b"service" + str(unix_s).encode()))
    return s.answer(link, _Still(), now, "service_auth", {"nonce": nonce, "mac": mac,
                                                      "time": unix_s})


@_cleaned
def test_a_sessions_entries_carry_the_pcs_time_signed_with_its_login():
    link = _Link(KEY)
    pc = 1767225600                         # 2026-01-01 00:00:00 UTC
    assert _signed_login(link, 1000, pc)["ok"]
    session.note_act(link, 4500, "rfid_scan", {}, "ok")
    session.close(link, 7000, "by the host")
    session.note_act(link, 9000, "rfid_scan", {}, "ok")      # no session's clock: uptime
    assert [e[0] for e in session.entries(link)] == [
        ["utc", pc], ["utc", pc + 3], ["utc", pc + 6], ["up", 9000]]
    # The time is under the MAC: another time with the same answer is refused.
    nonce = session.challenge(link, 10000)
    mac = _hex(hmac_sha256(KEY, binascii.unhexlify(nonce) + b"service" + str(pc).encode()))
    try:
        s.answer(link, _Still(), 10000, "service_auth", {"nonce": nonce, "mac": mac, "time": pc + 3600})
        raise AssertionError("a changed time was taken")
    except s.LinkError as e:
        assert e.code == "auth_failed"
    # Without a time, the answer is the MAC of the challenge alone: uptime.
    _Tech(link, 20000)
    assert session.entries(link)[-1] == [["up", 20000], "opened"]


class _Still:
    """A controller idle between hands, with the table's dice."""
    def __init__(self):
        from firmware.fakes.hal import FakeHal
        self.hal = FakeHal()

    def in_hand(self):
        return False

    def still(self):
        return True


@_cleaned
def test_a_dice_test_is_one_entry_a_session_with_its_rolls_summed():
    link = _Link(KEY)
    ctl = _Still()
    tech = _Tech(link, 10)
    for n in (500, 500, 120):
        assert _send(link, 20, tech.payload("dice_test", n=n), ctl)["ok"]
    assert _send(link, 20, tech.payload("dice_test", n=501), ctl)[0] == "bad_request"
    assert session.entries(link)[1:] == [[["up", 20], "dice_test", 1120, "ok"],
                                         [["up", 20], "dice_test", 501, "bad_request"]]
    tech = _Tech(link, 30)                   # the next session: an entry of its own
    assert _send(link, 40, tech.payload("dice_test", n=6), ctl)["ok"]
    assert session.entries(link)[-1] == [["up", 40], "dice_test", 6, "ok"]


@_cleaned
def test_an_entry_too_long_for_a_record_is_cut_to_fit():
    link = _Link(KEY)
    session.note_act(link, 1, "config_set", {"key": "mqtt.host", "value": "h" * 200}, "ok")
    e = session.entries(link)[0]
    assert e[1:3] == ["config_set", "mqtt.host"] and e[4] == "ok", e
    assert e[3].startswith('"hhh') and e[3].endswith("..."), e
    service_log.note(link, 2, ["rejected", "x" * 200])
    assert session.entries(link)[-1] == [["up", 2], "rejected", "(too long to log)"]


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
    assert page["entries"] == [[["up", 8], "rfid_scan", "ok"], [["up", 9], "rfid_scan", "ok"]]
    assert page["total"] == 10 and page["counts"] == []
    assert len(s.answer(link, _Ctl(), 20, "service_log", {})["entries"]) == 4
    assert s.answer(link, _Ctl(), 20, "service_log", {"start": 1 << 40})["entries"] == []
    assert _refused(s.answer, link, _Ctl(), 20, "service_log", {"n": 5})[0] == "bad_request"
