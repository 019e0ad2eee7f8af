"""No tile of a hand lies readable in the table's flash (docs/security.md,
The hand's record sealed): the files the firmware writes, read as
someone with the board's filesystem would, mid-hand and after it, name
no tile of the walls and no tag; the hand's record is there mid-hand,
sealed with the table's key, and gone once the hand has ended. On the
virtual table (the real firmware under MicroPython; virtual time,
nothing sleeps)."""

import binascii

import pytest

from firmware.controller.saved_state import RECORD_FILE
from host_tools.cli.ops import run_hand
from host_tools.sim.hand_players import HandPlayers
from hw_tests.harness import saved_record

# The board's own files that are not a hand's: its key and tag table
# (a production board keeps both in encrypted NVS), and its config.
NOT_A_HANDS = ("service.key", "tags.txt", "config.json")
RUN = 6                    # tile ids in a row that would tell the walls


def _files(sim):
    """The flash's files but the board's own."""
    return {name: data for name, data in sim.stored_files().items() if name not in NOT_A_HANDS}


def _named(files, ids, uids):
    """What of the walls (their tile ids by slot, RUN in a row, as bytes
    or hex text) and of the tags (each UID, as bytes or hex) a file
    holds: [(file, what)]."""
    found = []
    for name, data in files.items():
        low = data.lower()
        for i in range(len(ids) - RUN + 1):
            run = ids[i:i + RUN]
            if run in data or binascii.hexlify(run) in low:
                found.append((name, "the tiles of slots %d.." % i))
                break
        for uid in uids:
            if uid.to_bytes(4, "big") in data or b"%08x" % uid in low:
                found.append((name, "tag %08x" % uid))
                break
    return found


@pytest.mark.needs_sim
def test_no_tile_of_the_hand_lies_readable_in_the_flash(make_target):
    players = []
    target = make_target(seed=1, setup=lambda table: players.append(HandPlayers(table, seed=1)))
    table = target.table
    seen = {}

    def walls():
        """The walls as they came up, by slot: what must not be told."""
        slots = {}
        for side in range(4):
            slots.update(table.top_walls[side])
        seen["ids"] = bytes(slots[s].tid for s in sorted(slots))
        seen["uids"] = [slots[s].uid for s in sorted(slots)]

    def mid_hand():
        seen["mid"] = _files(target.sim)
        seen["record"] = saved_record(target.sim)
    target.when_table(lambda: players[0].scenario is not None, walls)
    target.when_table(lambda: len(players[0].taken) >= 60, mid_hand)
    out = run_hand(target.sim, target.link, players[0], timeout_s=target.hand_wall_s)
    assert out["ok"], {k: out[k] for k in out if k not in ("scenario", "observed")}
    target.wait_virtual(target.status()["uptime"] + 100)       # the hand end's writes done
    after = _files(target.sim)
    ids, uids = seen["ids"], seen["uids"]
    assert len(ids) == 144 and "mid" in seen, sorted(seen)
    # Mid-hand the record is there, sealed: the key opens it, and it holds
    # the walls; nothing else of the flash tells them.
    assert RECORD_FILE in seen["mid"], sorted(seen["mid"])
    rec = seen["record"]
    assert type(rec) is dict and binascii.unhexlify(rec["tiles"]) == ids, rec
    assert _named(seen["mid"], ids, uids) == []
    # After the hand, its record is gone, and nothing tells its walls.
    assert RECORD_FILE not in after, sorted(after)
    assert _named(after, ids, uids) == []
    # The check itself finds the walls where they lie: the record opened.
    assert _named({"opened": binascii.unhexlify(rec["tiles"])}, ids, uids)
