"""Hidden tiles never leave the controller (docs/protocol.md,
docs/reliability.md): every frame the firmware sends during two whole hands, played by
virtual players from the deal to the result, is decoded (events, and the
answers to every request a host can make during a hand, asked all along:
`status`, `hand`, the technician's readings and the service log, and the
refusals of the service commands that move or read tags, with a valid
session) and searched for a tile identity (a tile code or a tag UID)
and for the codec's secret keys. The one tile code allowed is the gold, in
`hand` events once it has been turned up (it lies face up on the table),
and it must be that hand's gold. Audit faults are the other place a tile
code may appear (walls not in play); none is injected here."""

import re
import time

from host_tools.link import codec as link_codec
from host_tools.link.client import LinkClient, LinkError
from host_tools.sim.hand_players import HandPlayers
from host_tools.sim.launcher import SimTable

TILE_CODE = re.compile(r"\b([1-9][mpsz]|[1-8]f)\b")
UID = re.compile(r"4d4a[0-9a-f]{4}", re.I)
HANDS = 2
# Every request a host may make during a hand (those that move actuators,
# change the config or read tags must be refused: busy). service_open is
# left out: its nonce is random hex, which may look like a tag UID.
DURING_HAND = (("counters", {}), ("sensors", {}), ("service_log", {}), ("faults", {"n": 3}),
               ("config_get", {}), ("dice_test", {"n": 5}),
               ("jog", {"actuator": "plate", "ms": 100}), ("config_set", {"key": "tile_sets",
                                                                          "value": 2}),
               ("rfid_scan", {}), ("rfid_audit", {}), ("rfid_learn", {}))


def _walk(obj, path, found):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in link_codec.SECRET:
                found.append((path + "." + k, v))
            _walk(v, path + "." + k, found)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _walk(v, "%s[%d]" % (path, i), found)
    elif isinstance(obj, str) and (TILE_CODE.search(obj) or UID.search(obj)):
        found.append((path, obj))


def test_nothing_sent_during_whole_hands_names_a_hidden_tile():
    with SimTable(seed=6) as sim:
        players = [HandPlayers(sim.table, seed=6 + k, skip_hands=k) for k in range(HANDS)]
        with LinkClient(sim.link_path) as link:
            link.hello()
            session = link.open_service(sim.key)
            link.request("start")
            seen, answers = [], []
            refusals = []
            hands = []                  # (hand index, the `hand` answer)
            results = 0
            deadline = time.monotonic() + 120
            while results < HANDS and time.monotonic() < deadline:
                ev = link.next_event(timeout=5)
                assert ev is not None, "the link went quiet"
                seen.append(ev)
                if len(seen) % 5 == 0:
                    answers.append(link.request("status"))
                    hands.append((results, link.request("hand")))
                if len(seen) % 25 == 0 and link.request("status")["state"] == "in_hand":
                    for op, args in DURING_HAND:
                        if op in ("jog", "config_set") or op.startswith("rfid_"):
                            args = dict(args, session=session)
                        try:
                            answers.append(link.request(op, **args))
                        except LinkError as e:
                            refusals.append((op, e.code))
                            answers.append({"error": e.code, "message": e.message})
                results += ev["ev"] == "result"
            answers.append(link.request("faults"))
            answers.append(link.request("config_get", key="ruleset"))
    assert results == HANDS, results
    refused = dict(refusals)
    for op in ("dice_test", "jog", "config_set", "rfid_scan", "rfid_audit", "rfid_learn"):
        assert refused.get(op) == "busy", (op, refusals)   # asked, and refused, in a hand
    assert all(ev["ev"] != "fault" for ev in seen), [ev for ev in seen if ev["ev"] == "fault"]
    assert all(p.scenario and p.taken for p in players)
    golds = []
    hand = -1
    found = []
    for i, ev in enumerate(seen):
        if ev["ev"] == "hand":
            if ev["n"] == 0:
                hand += 1
            gold = ev.pop("gold")
            if gold is not None:
                # public once turned up: that hand's gold, after the reveal
                assert ev["phase"] in ("play", "final", "draw"), ev
                assert gold == players[hand].hand.gold_code, (gold, hand)
                golds.append(gold)
        _walk(ev, "events[%d]" % i, found)
    for k, (index, ans) in enumerate(hands):
        gold = ans.pop("gold", None)
        if gold is not None:        # the hand's public state: its gold, once turned up
            assert ans["phase"] in ("play", "final", "draw"), ans
            assert gold == players[index].hand.gold_code, (gold, index)
        _walk(ans, "hand answers[%d]" % k, found)
    assert any(ans["active"] and "wall" in ans for _, ans in hands)
    _walk(answers, "answers", found)
    assert found == []
    assert golds, "the gold was never shown: the check above proved nothing"
    assert sum(1 for ev in seen if ev["ev"] == "hand") >= 40
