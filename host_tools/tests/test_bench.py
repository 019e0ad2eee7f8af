"""engine_core/tests/bench_replay as a program: the JSON it prints, and that
the replay it timed is the replay tool's (same states). No timing asserted."""

import json
import os
import subprocess
import sys

from engine_core.replay import replay
from host_tools.sim.hand_script import random_hand

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = os.path.join(os.path.dirname(sys.executable), "micropython")
KEYS = {"interpreter", "replay_ms_median", "replay_ms_p90", "runs",
        "hand_state_heap_bytes", "events", "hands"}
HEAP_KEYS = {"hand_state_heap_bytes", "apply_alloc_bytes_gc_off",
             "replay_alloc_bytes_gc_off", "states_heap_bytes"}


def tiny_scenario():
    """The opening and a few draws of a seeded hand, then a refused event."""
    scn, _ = random_hand(7)
    scn["events"] = scn["events"][:6] + [{"op": "deal"}]
    return scn


def run_bench(interpreter, scn, tmp_path, runs=3):
    path = tmp_path / "hands.jsonl"
    path.write_text(json.dumps(scn) + "\n")
    p = subprocess.run([interpreter, "-m", "engine_core.tests.bench_replay", str(path),
                        str(runs), "--states"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert len(lines) == 1, p.stdout
    return json.loads(lines[0])


def check_shape(out, scn, runs):
    assert KEYS <= set(out)
    assert out["runs"] == runs
    assert out["events"] == len(scn["events"])
    assert out["replay_ms_median"] >= 0 and out["replay_ms_p90"] >= out["replay_ms_median"]
    assert len(out["hands"]) == 1
    # The states of the timed replay are the replay tool's, refusal included.
    expected = json.loads(json.dumps(replay(scn)))
    assert expected[-1]["error"].startswith("deal:")
    assert out["hands"][0]["states"] == expected


def test_bench_replay_on_cpython(tmp_path):
    scn = tiny_scenario()
    out = run_bench(sys.executable, scn, tmp_path)
    check_shape(out, scn, 3)
    assert out["interpreter"] == "cpython"
    assert out["hand_state_heap_bytes"] is None


def test_bench_replay_on_micropython(tmp_path):
    scn = tiny_scenario()
    out = run_bench(MICROPYTHON, scn, tmp_path)
    check_shape(out, scn, 3)
    assert out["interpreter"] == "micropython"
    assert HEAP_KEYS <= set(out["hands"][0])
    assert out["hand_state_heap_bytes"] > 0
