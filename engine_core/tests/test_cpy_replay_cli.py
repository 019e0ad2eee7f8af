"""The replay tool as a program (§13): the same parsed output from
`python -m engine_core.replay` and `micropython -m engine_core.replay`, run
from the project root, on the tricky scenarios, random full hands and
malformed lines; and equal to the reference model."""

import json
import os
import subprocess
import sys

from engine_core.tests import reference_model
from engine_core.tests.test_cpy_props import _without_text
from engine_core.tests.test_scenarios import load_scenarios
from host_tools.sim.hand_script import random_hand

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = os.path.join(os.path.dirname(sys.executable), "micropython")


def run_tool(interpreter, text):
    p = subprocess.run([interpreter, "-m", "engine_core.replay"], input=text.encode(),
                       cwd=ROOT, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr.decode()
    return [json.loads(line) for line in p.stdout.decode().splitlines()], p.stderr.decode()


def _input():
    lines = [json.dumps(s) for s in load_scenarios()]
    for seed in range(12):
        scn, _ = random_hand(seed, ruleset=("fuzhou144", "luoyuan144", "luoyuan128")[seed % 3],
                             kong_rate=0.06, take_rate=0.02)
        lines.append(json.dumps(scn))
    return lines


def test_both_interpreters_print_the_same_states_as_the_reference():
    lines = _input()
    text = "\n".join(lines) + "\n"
    cpy, _ = run_tool(sys.executable, text)
    mpy, _ = run_tool(MICROPYTHON, text)
    assert len(cpy) == len(lines)
    assert cpy == mpy
    for line, out in zip(lines, cpy):
        assert _without_text(out) == _without_text(reference_model.replay_scenario(json.loads(line)))


def test_malformed_lines_are_answered_and_the_tool_goes_on():
    good = json.dumps(load_scenarios()[0])
    odd = dict(load_scenarios()[0])
    odd["tiles"] = list(odd["tiles"])
    odd["tiles"][odd["tiles"].index("9m")] = "1m"      # five 1m, three 9m
    text = "\n".join(["{not json", "", "[1, 2]", '{"dealer": 0}', json.dumps(odd), good]) + "\n"
    for interp in (sys.executable, MICROPYTHON):
        out, err = run_tool(interp, text)
        assert len(out) == 5                            # the blank line is skipped
        assert "not JSON" in out[0]["error"]
        assert "object" in out[1]["error"]
        assert "missing" in out[2]["error"]
        assert len(out[3]) == len(out[4]) == len(odd["events"])   # replayed as it is
        assert "line 5" in err and "1m: 5 on the table, 4 in fuzhou144" in err
        assert "9m: 3 on the table" in err
