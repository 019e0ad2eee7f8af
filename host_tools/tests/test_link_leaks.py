"""Hidden tiles never leave the controller: every frame the firmware sends
during whole cycles, with virtual players taking tiles from the walls in
play, is decoded and searched for a tile identity (a tile code or a tag UID)
and for the codec's secret keys. Audit faults are the one place a tile code
may appear (walls not in play); none is injected here."""

import re
import time

from firmware.link import codec
from host_tools.link_client import LinkClient
from host_tools.vtable.hand_players import HandPlayers
from host_tools.vtable.launcher import SimTable

TILE_CODE = re.compile(r"\b([1-9][mpsz]|[1-8]f)\b")
UID = re.compile(r"4d4a[0-9a-f]{4}", re.I)


def _walk(obj, path, found):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in codec.SECRET:
                found.append((path + "." + k, v))
            _walk(v, path + "." + k, found)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _walk(v, "%s[%d]" % (path, i), found)
    elif isinstance(obj, str) and (TILE_CODE.search(obj) or UID.search(obj)):
        found.append((path, obj))


def test_nothing_sent_during_cycles_and_hands_names_a_tile():
    with SimTable(seed=6) as sim:
        players = HandPlayers(sim.table, seed=6)     # they play the hand on the walls
        with LinkClient(sim.link_path) as link:
            link.hello()
            link.request("start")
            answers = []
            seen = []
            deadline = time.monotonic() + 60
            hands = 0
            while hands < 2 and time.monotonic() < deadline:
                ev = link.next_event(timeout=5)
                assert ev is not None, "the link went quiet"
                seen.append(ev)
                answers.append(link.request("status"))
                if ev["ev"] == "state" and ev["state"] == "in_hand":
                    # let the players take tiles for a while, then end the hand
                    t0 = sim.table.now
                    while sim.table.now < t0 + 30000 and time.monotonic() < deadline:
                        answers.append(link.request("status"))
                    answers.append(link.request("hand_end", winner=None))
                    hands += 1
            answers.append(link.request("faults"))
            answers.append(link.request("config_get", key="ruleset"))
    assert hands == 2 and players.taken, (hands, len(players.taken))
    assert all(ev["ev"] != "fault" for ev in seen), seen
    found = []
    _walk(seen, "events", found)
    _walk(answers, "answers", found)
    assert found == []
