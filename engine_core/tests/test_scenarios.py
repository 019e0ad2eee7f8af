"""The tricky scenarios of scenarios/tricky.jsonl: every fact a careful
reading of the rules gives (the "expect" of each line) holds. Runs on CPython
and MicroPython."""

import json

from engine_core.replay import replay

PATH = __file__.rsplit("/", 1)[0] + "/scenarios/tricky.jsonl"


def load_scenarios():
    out = []
    with open(PATH) as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
    return out


def test_every_tricky_scenario_meets_its_expectations():
    scenarios = load_scenarios()
    assert len(scenarios) >= 10
    for scn in scenarios:
        states = replay(scn)
        assert isinstance(states, list), (scn["name"], states)
        assert len(states) == len(scn["events"])
        for index in scn["expect"]:
            got = states[int(index)]
            assert "error" not in got, (scn["name"], index, got["error"])
            for key, want in scn["expect"][index].items():
                assert got[key] == want, (scn["name"], index, key, got[key], want)
