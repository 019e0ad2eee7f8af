"""The power-cut runner (host_tools/qa/powercuts/) in small: a few cuts at
random instants, idle and in hands that come back among them, each reboot
checked; and its store check finds damaged files. `make powercuts` cuts
1,000 times (docs/reliability.md); hw_tests/test_faults.py has the
10-cut test of the counters and the fault log."""

import os
import shutil
import tempfile
from types import SimpleNamespace

from host_tools.qa import powercuts
from host_tools.sim.launcher import CONFIG, TAGS


def test_a_few_cuts_at_random_instants_pass_every_check():
    # Virtual instants only: where each falls (a build, a hand) is then the
    # seed's, whatever the machine's load (a wall-clock cut falls where
    # the table has got to: test_cuts_at_wall_clock_instants_pass_too).
    out = powercuts.powercuts(8, seed=4, share_idle=0.25, share_fault=0.25, share_wall=0.0)
    assert out["ok"], out
    assert out["cuts"] == 8 and out["moved_before_command"] == 0
    # A cut build resumes on the clear, so an idle cut asked for after one
    # falls in the resumed build instead: idle may not come in 8 cuts.
    assert out["by_state"].get("in_hand") and out["by_state"].get("building"), out["by_state"]
    # Every cut: idle (nothing to say), a hand resumed (or the dealer's key
    # again), or power_lost with its reason.
    back = out["resumed"] + out["dice_again"]
    assert out["power_lost"] + back == 8 - out["by_state"].get("idle", 0), out
    assert back >= 1 and not out["replay_mismatches"]
    assert out["replay_checked"] == out["resumed"] + out["replay_after_clear"], out
    assert out["dealer_kept"] >= 1
    assert out["counters"]["lifts"] == out["seen"]["lifts"] >= 1


def test_cuts_at_wall_clock_instants_pass_too():
    """Cut wherever the firmware is (in a tick, a save, an event's write):
    every check holds, whatever state each cut falls in."""
    out = powercuts.powercuts(4, seed=4, share_idle=0.0, share_fault=0.0, share_wall=1.0)
    assert out["ok"], out
    assert out["cuts"] == 4 and out["wall_cuts"] >= 1 and out["moved_before_command"] == 0, out
    assert not out["replay_mismatches"], out


def _run(store):
    table = SimpleNamespace(attach=lambda device: None)
    sim = SimpleNamespace(table=table, store=store, config_path=str(CONFIG),
                          tags_path=str(TAGS), key=b"k" * 32)
    return powercuts.Run(sim, link=None, rng=None)


def test_the_store_check_finds_damaged_and_changed_files():
    from firmware import persist
    store = tempfile.mkdtemp()
    try:
        shutil.copy(CONFIG, os.path.join(store, "config.json"))
        shutil.copy(TAGS, os.path.join(store, "tags.txt"))
        with open(os.path.join(store, "service.key"), "wb") as f:
            f.write(b"k" * 32)
        counters = os.path.join(store, "counters.json")
        persist.save(counters, {"cycles": 1, "hands": 0, "lifts": 1, "tiles_fed": [36] * 4,
                                "faults": [[41, 1]], "log": [[5, 41, "power_lost", {}]]})
        run = _run(store)
        assert run.check_store() == []
        with open(counters, "r+b") as f:          # a byte changed on the flash
            f.seek(12)
            f.write(b"9")
        assert any("CRC" in p for p in run.check_store())
        persist.save(counters, {"cycles": 1, "hands": 0, "lifts": 1, "tiles_fed": [36] * 3,
                                "faults": [], "log": []})
        assert any("another shape" in p for p in run.check_store())
        os.remove(counters)
        assert "counters.json missing" in run.check_store()
        with open(os.path.join(store, "config.json"), "w") as f:
            f.write('{"ruleset": 7}')
        with open(os.path.join(store, "service.key"), "wb") as f:
            f.write(b"")
        problems = run.check_store()
        assert "config.json changed" in problems and "service.key changed" in problems
        assert any(p.startswith("config.json: ") for p in problems), problems
    finally:
        shutil.rmtree(store)


class _Link:
    """The link as the checker sees it: each `counters` answer, then the
    events the table sent after that answer (taken off the link later)."""

    def __init__(self, answers, after):
        self.answers = answers
        self.after = after
        self.queue = []

    def request(self, op, **args):
        if op == "counters":
            c = self.answers.pop(0)
            self.queue += self.after.pop(0) if self.after else []
            return dict(c)
        if op == "faults":
            return {"faults": []}
        return {"dealer": 1}

    def next_event(self, timeout=None):
        return self.queue.pop(0) if self.queue else None


def _counters(hands):
    return {"cycles": 142, "hands": hands, "lifts": 142,
            "tiles_fed": [36] * 4, "faults": [], "unsaved": 0}


def _boot_run(store, link, log):
    table = SimpleNamespace(attach=lambda device: None, now=10000, log=log,
                            players=SimpleNamespace(presses=[]))
    sim = SimpleNamespace(table=table, store=store, config_path=str(CONFIG),
                          tags_path=str(TAGS), key=b"k" * 32, restarts=1)
    run = powercuts.Run(sim, link=link, rng=None)
    run.parlour = SimpleNamespace(hands=[], current=None)
    run.seen.update(hands=141, cycles=142, lifts=142)
    run.wall = False               # a cut at a virtual instant: no count in flight
    return run


def _store():
    from firmware import persist
    store = tempfile.mkdtemp()
    shutil.copy(CONFIG, os.path.join(store, "config.json"))
    shutil.copy(TAGS, os.path.join(store, "tags.txt"))
    with open(os.path.join(store, "service.key"), "wb") as f:
        f.write(b"k" * 32)
    persist.save(os.path.join(store, "counters.json"), {
        "cycles": 142, "hands": 141, "lifts": 142, "tiles_fed": [36] * 4,
        "faults": [], "log": []})
    return store


def test_a_hand_resumed_and_ended_after_the_counters_answer_is_no_failure():
    # The players end the resumed hand after the table answered `counters`
    # (141) and before the checker takes its `result` off the link; the
    # table then builds and lifts the next set, the players' doing. Asked
    # again, the table says 142: no count was lost, nothing moved unasked.
    store = _store()
    try:
        result = {"ev": "result", "t": 6000, "winner": 0, "dealer": 1, "wins_in_row": 0,
                  "streak": 0}
        log = [(1500, "table", None, "boot", None), (6500, "out", None, "plate_motor", 800)]
        link = _Link([_counters(141), _counters(142)], [[result]])
        run = _boot_run(store, link, log)
        run.check_boot(0, 1000, "in_hand", {"ev": "hand_resumed", "t": 1600, "n": 3}, 0)
        assert run.out["failures"] == [], run.out["failures"]
        assert run.out["moved_before_command"] == 0
        assert run.seen["hands"] == 142 and run.prev["hands"] == 142
        assert run.out["asked_again"] == 1
    finally:
        shutil.rmtree(store)


def test_a_count_lost_at_the_cut_is_still_a_failure():
    # Every answer one behind what the host saw: a save lost, reported.
    store = _store()
    try:
        link = _Link([_counters(140)] * 4, [])
        log = [(1500, "table", None, "boot", None), (1800, "out", None, "plate_motor", 800)]
        run = _boot_run(store, link, log)
        run.check_boot(0, 1000, "in_hand", {"ev": "hand_resumed", "t": 1600, "n": 3}, 0)
        problems = run.out["failures"][0]["problems"]
        assert "hands 140, the host saw 141" in problems, problems
        assert any(p.startswith("outputs turned on before any command") for p in problems)
    finally:
        shutil.rmtree(store)


def test_a_resumed_hand_is_checked_against_the_players_of_its_walls():
    # The `hand_resumed` or `dice` event is taken off the link after the
    # next walls came up: the players of the walls up at the event's time
    # are its hand's, not the parlour's newest.
    run = _run(tempfile.gettempdir())
    old = SimpleNamespace(walls_up_at=100)
    new = SimpleNamespace(walls_up_at=5000)
    run.parlour = SimpleNamespace(hands=[old, new], current=new)
    run.check_next = True
    run.see_event({"ev": "dice", "t": 3000, "a": 3, "b": 4, "dealer": 0})
    assert run.following[0] is old
    run.check_next = True
    run.see_event({"ev": "dice", "t": 6000, "a": 3, "b": 4, "dealer": 0})
    assert run.following[0] is new
