"""The power-cut runner (host_tools/qa/powercuts.py) in small: a few cuts at
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
    out = powercuts.powercuts(8, seed=4, share_idle=0.25, share_fault=0.25, share_wall=0.5)
    assert out["ok"], out
    assert out["cuts"] == 8 and out["moved_before_command"] == 0
    assert out["by_state"].get("idle") and out["by_state"].get("in_hand"), out["by_state"]
    # Every cut: idle (nothing to say), a hand resumed (or the dealer's key
    # again), or power_lost with its reason.
    back = out["resumed"] + out["dice_again"]
    assert out["power_lost"] + back == 8 - out["by_state"]["idle"], out
    assert back >= 1 and out["replay_checked"] == out["resumed"] and not out["replay_mismatches"]
    assert out["dealer_kept"] >= 1
    assert out["counters"]["lifts"] == out["seen"]["lifts"] >= 1
    assert out["wall_cuts"] >= 1


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
        assert run._check_store() == []
        with open(counters, "r+b") as f:          # a byte changed on the flash
            f.seek(12)
            f.write(b"9")
        assert any("CRC" in p for p in run._check_store())
        persist.save(counters, {"cycles": 1, "hands": 0, "lifts": 1, "tiles_fed": [36] * 3,
                                "faults": [], "log": []})
        assert any("another shape" in p for p in run._check_store())
        os.remove(counters)
        assert "counters.json missing" in run._check_store()
        with open(os.path.join(store, "config.json"), "w") as f:
            f.write('{"ruleset": 7}')
        with open(os.path.join(store, "service.key"), "wb") as f:
            f.write(b"")
        problems = run._check_store()
        assert "config.json changed" in problems and "service.key changed" in problems
        assert any(p.startswith("config.json: ") for p in problems), problems
    finally:
        shutil.rmtree(store)
