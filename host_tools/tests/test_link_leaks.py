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
code may appear (walls not in play); none is injected here. What the
table publishes over MQTT is searched the same way, every message of a
whole hand and an audit fault's: hw_tests/test_telemetry.py."""

import json
import re
import time

import pytest

from engine_core import tiles
from hw_tests.harness import TableHook

from host_tools.link import codec as link_codec
from host_tools.link.client import LinkClient, LinkError
from host_tools.sim.config import DEFAULT_PATH
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


def _next_event(link, hook, sim, seen):
    """The link's next event, appended to `seen`; if the link goes quiet,
    the test fails with the virtual table's last minute of log (read in its
    bus thread through `hook`, when the test has one)."""
    ev = link.next_event(timeout=30)
    if ev is None:
        def last_minute():
            return sim.table.log_lines(since=60000)
        log = hook.call(last_minute) if hook is not None else last_minute()
        assert ev is not None, "the link went quiet: %s\n%s" % (seen, log)
    seen.append(ev)
    return ev


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
                ev = _next_event(link, None, sim, seen)
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


def test_nothing_sent_across_a_resumed_hand_names_a_hidden_tile():
    """The power cut in play and the hand brought back (controller/resume.py):
    the `hand_resumed` event, the states after it and the answers asked
    after the boot carry public facts only, the gold that hand's once up."""
    with SimTable(seed=6) as sim:
        players = HandPlayers(sim.table, seed=6, cut_after_ms=45000)
        with LinkClient(sim.link_path) as link:
            link.hello()
            link.request("start")
            seen, answers = [], []
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                ev = _next_event(link, None, sim, seen)
                if ev["ev"] in ("hand_resumed", "hand") and any(
                        e["ev"] == "hand_resumed" for e in seen):
                    answers.append(link.request("hand"))
                    answers.append(link.request("status"))
                if ev["ev"] in ("result", "fault"):
                    break
    resumed = [ev for ev in seen if ev["ev"] == "hand_resumed"]
    assert len(resumed) == 1 and players.cuts, (resumed, players.cuts)
    assert resumed[0]["phase"] in ("play", "final") and resumed[0]["n"] > 0, resumed
    found = []
    for i, ev in enumerate(seen):
        if ev["ev"] in ("hand", "hand_resumed"):
            gold = ev.pop("gold")
            assert gold is None or gold == players.hand.gold_code, (gold, ev)
        _walk(ev, "events[%d]" % i, found)
    for ans in answers:
        gold = ans.pop("gold", None)
        assert gold is None or gold == players.hand.gold_code, (gold, ans)
    _walk(answers, "answers", found)
    assert found == [] and len(answers) >= 10, (found, len(answers))


# -- the display and the link, across replugs --------------------------------

def _gold_turned_up(players):
    """When the gold's tile left the wall (the players' own clock): the
    last tile of the reveal_gold event; None if it never did."""
    if players.scenario is None:
        return None
    events = players.scenario["events"]
    times = [t for t, i, slot, kind in players.timeline
             if slot is not None and events[i]["op"] == "reveal_gold"]
    took = set(t for t, _, _ in players.taken)
    return max(times) if times and max(times) in took else None


def _hand_at(players, t):
    """The players of the hand whose walls were up last at t (None: before any)."""
    mine = [p for p in players if p.walls_up_at is not None and p.walls_up_at <= t]
    return max(mine, key=lambda p: p.walls_up_at) if mine else None


def _dice_at(dice, t, strict):
    """[a, b] of the last `dice` event at t or before (before t if strict)."""
    last = None
    for ev in dice:
        if ev["t"] < t or (ev["t"] == t and not strict):
            last = [ev["a"], ev["b"]]
    return last


def _check_public(players, seen, statuses, history):
    """Every display frame and link frame shows only what was public then:
    the gold once its tile was turned up (and that hand's), settled dice,
    counts the link had published."""
    dice = [ev for ev in seen if ev["ev"] == "dice"]
    problems = []
    for ev in seen:
        if ev["ev"] == "hand" and ev["gold"] is not None:
            p = _hand_at(players, ev["t"])
            up = _gold_turned_up(p)
            if up is None or ev["t"] < up or ev["gold"] != p.hand.gold_code:
                problems.append(("link: the gold before it was turned up", ev, up))
    for st in statuses:                # null while they roll
        if st["dice"] is not None and st["dice"] not in (_dice_at(dice, st["uptime"], True),
                                                         _dice_at(dice, st["uptime"], False)):
            problems.append(("status: dice not settled", st["uptime"], st["dice"], dice))
    if not any(st["dice"] for st in statuses):
        problems.append(("status: never any dice", statuses))
    published = {}                    # players -> the counts the link published
    for ev in seen:
        if ev["ev"] == "hand":
            p = _hand_at(players, ev["t"])
            marker = tuple(ev["marker"]) if ev["marker"] else (255, 255)
            published.setdefault(id(p), []).append((ev["t"], (ev["drawable"],) + marker))
    first_count = {}
    for t, field, value in history:
        p = _hand_at(players, t)
        if field == "gold" and value != 255:
            up = _gold_turned_up(p) if p else None
            if up is None or t < up or tiles.CODES[value] != p.hand.gold_code:
                problems.append(("display: the gold before it was turned up", t, value, up))
        elif field == "dice":
            a, b, rolling = value
            if (rolling and (a, b) != (0, 0)) or \
                    (not rolling and [a, b] != _dice_at(dice, t, False)):
                problems.append(("display: dice not settled", t, value))
        elif field == "count" and p is not None:
            first_count.setdefault(id(p), value)
            ok = [c for at, c in published.get(id(p), []) if at <= t]
            if value not in ok and value != first_count[id(p)]:
                problems.append(("display: counts not published", t, value))
        elif field == "text":
            problems.append(("display: a text", t, value))
    return problems


def _unplug_in_hand(hook, table, players, settle):
    """The display unplugged as the hand opens: found (a frame not ACKed)
    when the flower round is published, which turns the gold up in the
    rules core before its tile has gone (the tail method); the gold by the
    dice, just before the dealer presses for the gold's roll (found as the
    dice start rolling, plugged back in while they roll) and, with
    `settle`, just before they settle (found once the gold is turned up
    in the core)."""
    def unplug():
        table.inject("display_unplugged")
    events = players.scenario["events"]
    opening = [t for t, i, slot, kind in players.timeline if slot is not None
               and events[i]["op"] in ("deal", "replace_flowers")]
    hook.at(opening[-1] + 10, unplug)
    roll = [t for t, _, _, kind in players.timeline if kind == "roll"]
    if roll:
        hook.at(roll[0] - 50, unplug)
        if settle:
            hook.at(roll[0] + 1300, unplug)


def _play_with_replugs(seed, ruleset, hands, kongs, tmp_path):
    """`hands` short hands on the virtual table; the display is unplugged
    as the dice roll, as the deal starts and (the gold by the dice) as the
    gold's roll is due, and plugged back in once the table stops; with
    `kongs`, a kong for each seat declared on the link as the last hand's
    gold roll settles, before its tile is turned up (events waiting for
    their tiles behind the gold's), and a second for seat 0, refused (its
    replacement is still on the wall).
    Every status answer, link event and display frame is kept."""
    cfg = json.loads(DEFAULT_PATH.read_text())
    cfg["ruleset"] = ruleset
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    sim = SimTable(seed=seed, config_path=path)
    with sim:
        hook = TableHook(sim.table)
        players = [HandPlayers(sim.table, seed=seed + k, skip_hands=k, win_rate=0.25)
                   for k in range(hands)]
        with LinkClient(sim.link_path) as link:
            link.hello()
            for k, p in enumerate(players):
                hook.when(lambda p=p: p.scenario is not None,
                          lambda p=p, k=k: _unplug_in_hand(hook, sim.table, p, k == 0))
            link.request("start")
            seen, statuses = [], []
            results = 0
            replugs = 0
            kongs_ok = []
            deadline = time.monotonic() + 120
            while results < hands and time.monotonic() < deadline:
                ev = _next_event(link, hook, sim, seen)
                kind = ev["ev"]
                if kind == "state" and ev["state"] == "rolling":
                    statuses.append(link.request("status"))     # the dice are rolling
                    hook.call(lambda: sim.table.inject("display_unplugged"))
                elif kind == "fault":
                    assert ev["name"] == "display_unplugged", ev
                    hook.call(lambda: sim.table.clear_fault("display_unplugged"))
                    statuses.append(link.request("status"))
                    link.request("clear")
                    replugs += 1
                elif kind == "dice" and ev.get("gold") and kongs and results == hands - 1:
                    for seat in range(4):
                        kongs_ok.append(link.request("kong", seat=seat, kind="exposed"))
                    with pytest.raises(LinkError, match="replacement"):
                        link.request("kong", seat=0, kind="exposed")
                if kind in ("dice", "hand", "cleared"):
                    statuses.append(link.request("status"))
                results += kind == "result"
            history = hook.call(lambda: list(sim.table.display.history))
    assert results == hands, (results, seen[-5:])
    assert not hook.errors, hook.errors
    assert len(kongs_ok) == (4 if kongs else 0), kongs_ok
    return players, seen, statuses, history, replugs


@pytest.mark.parametrize("seed,ruleset,kongs", [(6, "fuzhou144", False),
                                                (2, "luoyuan144", True)])
def test_the_display_and_the_link_show_only_public_facts_across_replugs(seed, ruleset, kongs,
                                                                      tmp_path):
    players, seen, statuses, history, replugs = _play_with_replugs(seed, ruleset, 2, kongs,
                                                                   tmp_path)
    assert replugs >= 4, replugs
    problems = _check_public(players, seen, statuses, history)
    assert problems == [], "\n".join(repr(p)[:300] for p in problems)
    found = []
    for i, ev in enumerate(seen):
        ev = dict(ev)
        if ev["ev"] == "hand":
            ev.pop("gold")
        _walk(ev, "events[%d]" % i, found)
    _walk(statuses, "status", found)
    assert found == []
    assert any(field == "gold" and value != 255 for _, field, value in history)
