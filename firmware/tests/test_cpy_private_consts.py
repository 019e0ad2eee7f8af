"""CPython only: private constants (`_NAME = const(...)`) are compiled away
on the board, so where a module keeps its own constant copy of another's
table (no module global, no interned name), the copy is checked here."""

from firmware.link import server


def test_the_link_servers_secret_keys_are_the_codecs():
    """The keys that name tiles (the server's copy checks fault logs)."""
    from firmware.link import codec
    assert server._SECRET == codec._SECRET


def test_the_link_server_tests_request_kind_is_the_codecs():
    from firmware.link import codec
    from firmware.tests import test_link_server
    assert test_link_server.REQUEST == codec._REQUEST


def test_the_words_the_dispatch_compares_are_the_codecs():
    """The server routes by the home, service.py checks by the permission,
    each a word of a request's line in the codec's table, compared as a
    literal (test_cpy_dispatch.py checks every line)."""
    import ast
    import inspect
    from firmware.link import codec, service
    for module, name, words in ((server, "home", codec._HOMES), (service, "who", codec._WHO)):
        compared = set()
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)
                    and node.left.id == name):
                compared |= {c.value for c in node.comparators if isinstance(c, ast.Constant)}
        assert compared and compared <= set(words), (name, compared)


def test_the_followers_copy_of_the_readers_waiting_state():
    from firmware.controller import follower
    from firmware.drivers import rfid
    assert follower._WAITING == rfid._WAITING == 1


def test_the_rebuilds_copy_of_the_followers_slot_marks():
    from firmware.controller import follower, wake
    assert (wake._CONFIRM, wake._PRESENT, wake._MISSING) == (
        follower._CONFIRM, follower._PRESENT, follower._MISSING)


def test_the_hidden_driver_states_are_where_their_names_say():
    from firmware.drivers import motion, panel
    assert motion.NAMES[motion._RISING] == "rising"
    assert motion.NAMES[motion._LOWERING] == "lowering"
    assert panel._NONE == 0


def test_the_controllers_works_cycle_marker_is_the_tables():
    from firmware.controller import table, work
    assert work._MARK == table._MARK


def test_the_tables_empty_slot_is_the_tiles():
    from engine_core import tiles
    from firmware.controller import table
    assert table._NO_TILE == tiles.NO_TILE


def test_the_hals_end_of_the_random_block_is_the_drbgs():
    from firmware import drbg, hal
    assert hal._END == drbg._BLOCK + 32 == drbg._K


def test_the_fault_raisers_states_are_the_controllers():
    """trip.py enters FAULT and names where a clear resumes by the
    controller's state numbers, copied."""
    from firmware.controller import table, trip
    assert (trip._BOOT, trip._IDLE, trip._FAULT) == (table._BOOT, table._IDLE, table._FAULT)
    assert table.NAMES[trip._BOOT] == "boot" and table.NAMES[trip._FAULT] == "fault"


def test_the_builders_reader_states_are_the_readers():
    from firmware.controller import builder
    from firmware.drivers import rfid
    assert (builder._R_WAITING, builder._R_DONE) == (rfid._WAITING, rfid.DONE)


def test_what_survives_a_power_cut_names_the_controllers_files():
    """kept.py writes the hand's record the boot reads back (wake.py)."""
    from firmware.controller import kept, wake
    assert kept._RECORD == wake._RECORD


def test_the_telemetrys_resuming_state_is_the_controllers():
    from firmware.controller import table
    from firmware.link import mqtthook, telemetry
    assert table.NAMES[telemetry._RESUMING] == "resuming" == table.NAMES[mqtthook._RESUMING]


def test_the_telemetry_hooks_slots_are_its_fields():
    from firmware.link import mqtthook, telemetry
    for name in ("link", "again", "events", "due", "aside", "dropped", "placed", "spare", "client",
                 "ticks_diff"):
        assert getattr(mqtthook, "_" + name.upper()) == telemetry.FIELDS.index(name)
    assert mqtthook._QUEUE == telemetry._QUEUE
