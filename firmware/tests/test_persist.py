"""Files kept across power cuts (firmware/persist.py), on both
interpreters: what is saved loads back; a cut before the rename leaves the
old file whole; a damaged file is refused, not read as counters; a whole
file of another shape is not taken either, and the table says so."""

import os

from firmware.link.handlers import HANDLERS
from firmware import persist
from firmware.controller import safe_stop

PATH = "persist-test.json"


def _clean():
    for p in (PATH, PATH + ".new"):
        try:
            os.remove(p)
        except OSError:
            pass


def test_what_is_saved_loads_back_and_nothing_is_none():
    _clean()
    try:
        assert persist.load(PATH) is None
        state = {"cycles": 3, "log": [[10, 12, "lift_stuck", {"side": 2}]]}
        persist.save(PATH, state)
        assert persist.load(PATH) == state
        persist.save(PATH, {"cycles": 4})
        assert persist.load(PATH) == {"cycles": 4}
    finally:
        _clean()


def test_a_cut_before_the_rename_leaves_the_old_file():
    _clean()
    try:
        persist.save(PATH, {"cycles": 5})
        with open(PATH + ".new", "w") as f:      # the power went mid-write
            f.write("12ab {\"cycles\": ")
        assert persist.load(PATH) == {"cycles": 5}
        persist.save(PATH, {"cycles": 6})         # the next save goes through
        assert persist.load(PATH) == {"cycles": 6}
    finally:
        _clean()


def test_a_damaged_file_is_refused_and_says_so():
    _clean()
    try:
        persist.save(PATH, {"cycles": 7})
        with open(PATH) as f:
            data = f.read()
        for bad in (data.replace("7", "8"), data[:-3], "", "zz" + data[2:], "garbage"):
            with open(PATH, "w") as f:
                f.write(bad)
            try:
                persist.load(PATH)
            except ValueError as e:
                assert "damaged" in str(e)
            else:
                assert False, "a damaged file was read: %r" % bad
    finally:
        _clean()


def test_the_table_starts_from_zero_and_says_so_on_a_file_of_another_shape():
    """A counters file whole by its CRC but not this firmware's (missing a
    key, a list where a number goes): nothing of it is taken, no crash."""
    from firmware import config, tags
    from firmware.controller.table import TableController
    from firmware.devices import Devices
    from firmware.fakes.hal import FIRMWARE_DIR
    from firmware.tests.test_output_guard import GuardedPins
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    table = tags.load(FIRMWARE_DIR + "/tags.txt")
    for bad in ({"cycles": 3}, {"cycles": 3, "hands": 1, "lifts": 2, "tiles_fed": [1, 2],
                                "faults": [], "log": []},
                {"cycles": 3, "hands": 1, "lifts": 2, "tiles_fed": [0, 0, 0, 0],
                 "faults": [[500, 1]], "log": []}):
        hal = GuardedPins()
        hal.store = ""
        persist.save("counters.json", bad)
        try:
            ctl = TableController(hal, cfg, Devices(hal, cfg, table), lambda n, f: None)
            ctl.boot(0)
            assert ctl.cycles == 0 and ctl.lost and "zero" in ctl.lost, (bad, ctl.lost)
        finally:
            os.remove("counters.json")


def _table():
    from firmware import config, tags
    from firmware.controller.table import TableController
    from firmware.devices import Devices
    from firmware.fakes.hal import FIRMWARE_DIR
    from firmware.tests.test_output_guard import GuardedPins
    cfg = config.load(FIRMWARE_DIR + "/config.json")
    hal = GuardedPins()
    hal.store = ""
    ctl = TableController(hal, cfg, Devices(hal, cfg, tags.load(FIRMWARE_DIR + "/tags.txt")),
                          lambda n, f: None)
    ctl.boot(0)
    return ctl


def test_the_fault_log_lives_in_the_counters_file_newest_first_and_bounded():
    """Each fault is saved with the counters; the log the link answers is
    the file's, the newest first, the last 16 kept."""
    _clean()
    try:
        ctl = _table()
        assert ctl.faults_logged() == []
        for k in range(20):
            safe_stop.fault(ctl, 100 + k, 12, {"side": k % 4, "ms": 900})
            ctl.state = 1                  # as if cleared: idle
        log = ctl.faults_logged()
        assert len(log) == 16
        assert log[0] == [119, 12, "lift_stuck", {"side": 3, "ms": 900}]
        assert [e[0] for e in log] == list(range(119, 103, -1))
        assert persist.load("counters.json")["log"][-1] == log[0]
        ctl2 = _table()                    # a restart reads them back
        assert ctl2.faults_logged() == log and ctl2.lost is None
    finally:
        os.remove("counters.json")


def test_a_damaged_counters_file_gives_an_empty_log_and_the_next_save_repairs_it():
    try:
        ctl = _table()
        safe_stop.fault(ctl, 5, 30, {"count": 1, "ms": 200})
        with open("counters.json", "w") as f:
            f.write("garbage")
        assert ctl.faults_logged() == []
        safe_stop.fault(ctl, 6, 23, {"side": 1, "ms": 400})
        assert ctl.faults_logged() == [[6, 23, "rfid_timeout", {"side": 1, "ms": 400}]]
    finally:
        os.remove("counters.json")


def test_the_link_answers_the_fault_log_for_any_count_asked():
    """`faults` with n of any size (the link fuzz sends 2**40): the newest n,
    never an error of the controller."""
    from firmware.link.server import LinkServer
    from firmware.tests.test_link_server import Line, _answers
    try:
        ctl = _table()
        for k in range(3):
            safe_stop.fault(ctl, 10 + k, 23, {"side": k, "ms": 400})
            ctl.state = 1
        server = LinkServer(ctl.hal, "0.0.0", "test")
        server.attach(ctl, HANDLERS)
        ctl.hal.link = line = Line(b"")
        got = _answers(server, line, [b'{"op":"faults","n":1099511627776}', b'{"op":"faults","n":-1}',
                                      b'{"op":"faults","n":2}'])
        assert [len(a["faults"]) for _, a in got] == [3, 0, 2], got
        assert got[2][1]["faults"][0]["t"] == 12 and got[0][1]["total"] == 3
    finally:
        os.remove("counters.json")
