"""The tag table (firmware/tags.py, firmware/tags.txt): the shipped table,
lookups, and the errors of a bad file. Files are written in the current
directory (no tempfile module on MicroPython) and removed."""

from engine_core import tiles
from engine_core.rulesets import load as load_ruleset
from firmware import tags
from firmware.fakes.hal import FIRMWARE_DIR, remove_temp, write_temp


def lookup(table, uid):
    """Tile id of a UID given as an int (the reader gives its bytes)."""
    return table.lookup_at(bytes((uid >> 24, (uid >> 16) & 0xFF, (uid >> 8) & 0xFF, uid & 0xFF)), 0)

PATH = FIRMWARE_DIR + "/tags.txt"


def load_text(text):
    name = write_temp(text)
    try:
        return tags.load(name)
    finally:
        remove_temp(name)


def refused(text):
    try:
        load_text(text)
    except ValueError as e:
        return str(e)
    raise AssertionError("accepted: %r" % (text,))


def test_the_shipped_table_has_both_sets():
    table = tags.load(PATH)
    assert len(table) == 288
    counts = load_ruleset("fuzhou144").tile_counts()
    for tid in range(tiles.N_KINDS):     # 0x4D4A, tile id, 0x10 x set + copy
        for s in (0, 1):
            for copy in range(counts[tid]):
                assert lookup(table, 0x4D4A0000 | (tid << 8) | (0x10 * s + copy)) == tid


def test_lookups_of_known_and_unknown_uids():
    table = tags.load(PATH)
    assert lookup(table, 0x4D4A1B02) == tiles.tile_id("1z")
    assert lookup(table, 0x4D4A0000) == tiles.tile_id("1m")
    assert lookup(table, 0x4D4A2910) == tiles.tile_id("8f")     # one copy a set
    for uid in (0, 1, 0x4D4A1B04, 0x4D4A2901, 0x4D4A2912, 0x4D4A2A00, 0x4D49FFFF,
                0xFFFFFFFF, 0xDEADBEEF):
        assert lookup(table, uid) == tags.UNKNOWN, uid


def test_a_small_table_in_any_order():
    table = load_text("# test\n\n0000000a 2p\n00000001 1m  # a comment\nffffffff 8f\n00000005 5z\n")
    assert len(table) == 4
    assert lookup(table, 1) == tiles.tile_id("1m")
    assert lookup(table, 5) == tiles.tile_id("5z")
    assert lookup(table, 10) == tiles.tile_id("2p")
    assert lookup(table, 0xFFFFFFFF) == tiles.tile_id("8f")
    for uid in (0, 2, 6, 11, 0xFFFFFFFE):
        assert lookup(table, uid) == tags.UNKNOWN


def test_a_uid_listed_twice_is_an_error():
    msg = refused("4d4a0000 1m\n4d4a0101 2m\n4d4a0000 1m\n")
    assert "4d4a0000" in msg and "twice" in msg, msg
    msg = refused("4d4a0000 1m\n4D4A0000 2m\n")       # the same UID in capitals
    assert "4d4a0000" in msg and "twice" in msg, msg


def test_a_bad_tile_code_is_an_error():
    msg = refused("4d4a0000 1m\n4d4a0001 9z\n")
    assert "9z" in msg and "line 2" in msg, msg
    assert "0m" in refused("4d4a0000 0m\n")


def test_a_bad_uid_is_an_error():
    assert "line 1" in refused("4d4a000 1m\n")                 # 7 digits
    assert "line 1" in refused("4d4a00000 1m\n")               # 9 digits
    assert "line 2" in refused("4d4a0000 1m\n4d4a00zz 1m\n")   # not hex
    assert "line 1" in refused("4d4a0000\n")                   # no code
    assert "line 1" in refused("4d4a0000 1m 2m\n")             # one too many


def test_a_missing_file_is_an_error():
    remove_temp("_fw_no_such_tags.txt")
    msg = refused_path("_fw_no_such_tags.txt")
    assert "cannot read" in msg, msg


def refused_path(path):
    try:
        tags.load(path)
    except ValueError as e:
        return str(e)
    raise AssertionError("accepted")
