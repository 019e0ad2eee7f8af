"""A broken config file: the firmware boots, says why, and moves nothing.

The machine (the virtual table) is the default one; only the firmware's
config file is broken, as when a technician saves a bad config.json.
"""

import json

import pytest

from host_tools import texts
from host_tools.link.client import LinkError
from host_tools.texts.refusal import said

CONFIG_INVALID = 40


def _default():
    from host_tools.sim.launcher import CONFIG
    return json.loads(CONFIG.read_text())


def _duplicate_gpio(path):
    cfg = _default()
    cfg["pins"]["lane_feed"][1] = cfg["pins"]["plate_motor"]
    path.write_text(json.dumps(cfg))
    return {"why": "pin_twice", "key": "pins.lane_feed[1]", "other": "pins.plate_motor"}


def _strapping_pin(path):
    cfg = _default()
    cfg["pins"]["rfid_rx"] = 0           # GPIO0 low at reset: the download mode
    path.write_text(json.dumps(cfg))
    return {"why": "pin_boot", "key": "pins.rfid_rx", "gpio": 0}


def _missing_timing(path):
    cfg = _default()
    del cfg["timings"]["lane_idle_ms"]
    path.write_text(json.dumps(cfg))
    return {"why": "range", "key": "timings.lane_idle_ms", "got": None}


def _bad_json(path):
    text = json.dumps(_default(), indent=2)
    path.write_text(text[: len(text) // 2])          # cut off half way
    return {"why": "not_json"}


@pytest.mark.needs_sim
@pytest.mark.parametrize("breakage", [_duplicate_gpio, _strapping_pin, _missing_timing, _bad_json],
                         ids=["duplicate_gpio", "strapping_pin", "missing_timing", "bad_json"])
def test_a_bad_config_is_reported_and_nothing_moves(make_target, tmp_path, breakage):
    path = tmp_path / "config.json"
    facts = breakage(path)
    target = make_target(seed=1, firmware_config_path=path)
    # hello answers as usual
    assert target.hello_info["fw"] and target.hello_info["proto"] >= 1
    st = target.status()
    assert st["state"] == "fault", st
    fault = st["fault"]
    assert fault["code"] == CONFIG_INVALID and fault["name"] == "config_invalid", fault
    detail = fault["detail"]
    assert {k: detail.get(k) for k in facts} == facts, fault
    assert detail["reason"].startswith("config: "), fault       # the checker's own text
    # The host says it in words, in either language.
    for lang in ("en", "zh"):
        texts.set_lang(lang)
        try:
            words = said(detail["reason"], detail)
        finally:
            texts.set_lang("en")
        assert words != detail["reason"] and facts["why"] not in words, words
        assert lang == "en" or texts.CJK.search(words), words
    # Nothing else is served: every other request says config_invalid.
    for op in ("start", "clear", "faults"):
        with pytest.raises(LinkError) as e:
            target.request(op)
        assert e.value.code == "config_invalid", (op, e.value)
        assert e.value.message == detail["reason"], e.value.message
        assert {k: e.value.info.get(k) for k in facts} == facts, e.value.info
    # Two virtual seconds later: no output was ever driven.
    target.wait_virtual(st["uptime"] + 2000)
    assert target.output_changes() == [], target.output_changes()
    assert all(v == 0 for v in target.table.outputs.values()), target.table.outputs
    assert target.table.errors == []
    assert target.status()["fault"]["code"] == CONFIG_INVALID
