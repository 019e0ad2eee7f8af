"""Files kept across power cuts (firmware/persist.py), on both
interpreters: what is saved loads back; a cut before the rename leaves the
old file whole; a damaged file is refused, not read as counters; a whole
file of another shape is not taken either, and the table says so."""

import os

from firmware import persist

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
    from firmware.tests.fakehal import FIRMWARE_DIR
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
