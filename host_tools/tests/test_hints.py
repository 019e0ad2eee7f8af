"""Hints that are right: after each refusal mjctl names the next step that
works (the lockout: wait, the key is right), a mistyped command or config
key gets "did you mean", and a number typed for a text key is told to be
quoted before anything is sent."""

import json

import pytest

from firmware.link import mqttconf, session
from firmware.link.codec import LinkError
from firmware.tests import service_helpers as fw
from host_tools import texts
from engine_core.rulesets import SettingError
from host_tools.cli import hints, mjctl, refusals
from host_tools.texts.refusal import said
from host_tools.tests.mjctl_cli_helpers import run
from host_tools.texts import en, zh


@pytest.fixture(params=["en", "zh"])
def each_lang(request):
    texts.set_lang(request.param)
    yield request.param
    texts.set_lang("en")


def _refusal(fn, *args):
    try:
        fn(*args)
    except LinkError as e:
        return e
    raise AssertionError("not refused")


def _auth_refusals(tmp_path, monkeypatch):
    """The firmware's own refusals of service_auth: a wrong key, then the
    right key while locked, then a challenge that expired."""
    monkeypatch.chdir(tmp_path)                # the firmware's service log goes here
    link = fw._Link(fw.KEY)
    nonce = session.challenge(link, 0)
    wrong = _refusal(session.authenticate, link, 5, nonce, fw._answer(nonce, b"\x01" * 32))
    locked = _refusal(session.authenticate, link, 100, nonce, fw._answer(nonce))
    assert session.authenticate(link, 300, nonce, fw._answer(nonce))
    nonce = session.challenge(link, 1000)
    expired = _refusal(session.authenticate, link, 1000 + fw.s.NONCE_MS + 1, nonce,
                       fw._answer(nonce))
    return wrong, locked, expired


def test_the_lockout_says_wait_and_not_that_the_key_is_wrong(tmp_path, monkeypatch, each_lang):
    wrong, locked, expired = _auth_refusals(tmp_path, monkeypatch)
    table = zh.TEXTS if each_lang == "zh" else en.TEXTS
    code, line = mjctl.link_error(locked, "/dev/ttyACM0")
    # The firmware's 155 ms left, in whole seconds up: 1 s.
    assert code == mjctl.EXIT_REFUSED and line.endswith(table["hint.locked"].format(s=1)), line
    assert line.startswith(table["why.locked"].format(n=1)), line
    assert table["hint.auth_failed"] not in line and "make deploy" not in line
    # The wrong key itself still says which key to use; an expired challenge: again.
    assert mjctl.link_error(wrong, "p")[1].endswith(table["hint.auth_failed"])
    assert mjctl.link_error(expired, "p")[1].endswith(table["hint.auth_retry"])


def test_a_longer_lockout_says_its_seconds():
    e = LinkError("auth_failed", "locked after 6 wrong answers in a row: try again in 7001 ms",
                  {"why": "locked", "n": 6, "retry_ms": 7001})
    assert refusals.hint(e) == en.TEXTS["hint.locked"].format(s=8)


# Each refusal with the facts the firmware gives it (firmware/link/session.py,
# service.py, commands.py, readouts.py, mqttconf.py) and the hint that names
# its next step; the English texts are the firmware's own, to fall back on.
REFUSALS = [
    ("auth_failed", "wrong key", {"why": "wrong_key"}, "hint.auth_failed"),
    ("auth_failed", "locked after 1 wrong answers in a row: try again in 155 ms",
     {"why": "locked", "n": 1, "retry_ms": 155}, "hint.locked"),
    ("auth_failed", "unknown, used or expired challenge (ask service_open)", {"why": "challenge"},
     "hint.auth_retry"),
    ("auth_failed", "this table has no service key (make deploy KEY=...)", {"why": "keyless"},
     "hint.auth_no_key"),
    ("auth_failed", "jog: no ctr, or a wrong mac", {"why": "bad_mac", "op": "jog"},
     "hint.auth_retry"),
    ("busy", "jog is refused during a hand", {"why": "in_hand", "op": "jog"}, "hint.busy_hand"),
    ("busy", "a jog or a scan is running", {"why": "working"}, "hint.busy"),
    ("busy", "the table is building, not idle", {"why": "not_idle", "state": "building"},
     "hint.not_idle"),
    ("busy", "no hand is being played (state idle)", {"why": "no_hand", "state": "idle"},
     "hint.no_hand"),
    ("no_session", "jog needs a service session (service_open)",
     {"why": "no_session", "op": "jog"}, "hint.no_session"),
    ("session_expired", "the service session expired: open another", {"why": "expired"},
     "hint.session_expired"),
    ("refused", "jog only when idle or stopped by a fault (the table is building)",
     {"why": "not_still", "op": "jog", "state": "building"}, "hint.refused_still"),
    ("refused", "scan the walls first (rfid_scan), and move nothing after", {"why": "scan_first"},
     "hint.refused_scan"),
    ("refused", "slot 17 has no tag: lay the whole reference set", {"why": "no_tag", "slot": 17},
     "hint.refused_no_tag"),
    ("refused", "slots 3 and 40 read the same tag", {"why": "same_tag", "slot": 40, "other": 3},
     "hint.refused_same_tag"),
    ("refused", "lifter 1 is already at its down switch",
     {"why": "at_switch", "n": 1, "switch": "down"}, "hint.refused_at_switch"),
    ("refused", "a refusal worded as this host does not know", None, "hint.refused"),
    ("bad_request", "ms must be 1..5000, not 0",
     {"why": "range", "key": "ms", "lo": 1, "hi": 5000, "got": 0}, "hint.bad_request"),
    ("not_found", "the config has no 'colour'", {"why": "unknown_key", "key": "colour"},
     "hint.not_found"),
    ("not_found", "the config has no 'timings.lift_up'",
     {"why": "unknown_key", "key": "timings.lift_up"}, "hint.did_you_mean"),
]


@pytest.mark.parametrize("code, message, info, key", REFUSALS)
def test_each_refusal_gets_the_hint_of_its_next_step(code, message, info, key, each_lang):
    got = refusals.hint(LinkError(code, message, info), "jog")
    table = zh.TEXTS if each_lang == "zh" else en.TEXTS
    want = table[key].format(s=1, n=1, other="lift_up", command="jog", word="timings.lift_up_ms")
    assert got == want


@pytest.mark.parametrize("code, message, info, key", REFUSALS)
def test_each_refusal_reads_in_chinese_from_its_facts(code, message, info, key):
    english = said(message, info)
    texts.set_lang("zh")
    try:
        chinese = said(message, info)
        line = refusals.line(LinkError(code, message, info), "jog")
    finally:
        texts.set_lang("en")
    assert line.startswith(chinese + "（%s）" % code), line
    if info is None:                   # no word this host knows: the firmware's text, as it came
        assert chinese == english == message
        return
    assert texts.CJK.search(chinese) and message not in line, line
    assert english == en.TEXTS["why." + info["why"]].format(
        **dict(info, switch="bottom", op=en.TEXTS.get("request." + str(info.get("op")), ""),
               state=en.TEXTS.get("state." + str(info.get("state")), ""),
               got=json.dumps(info.get("got")), key=info.get("key", "")))


def test_every_hint_in_the_tables_is_one_a_refusal_gets():
    hint_keys = {k for k in en.TEXTS if k.startswith("hint.")}
    assert hint_keys == {key for _, _, _, key in REFUSALS} | {"hint.auth_no_key"}


def test_the_rfid_learn_refusal_names_the_reference_set_not_status(each_lang):
    e = LinkError("refused", "slot 17 has no tag: lay the whole reference set",
                  {"why": "no_tag", "slot": 17})
    assert "mjctl rfid learn" in refusals.hint(e, "rfid")
    assert "status" not in refusals.hint(e, "rfid")


def test_a_mistyped_telemetry_key_refused_by_the_firmware_gets_did_you_mean():
    with pytest.raises(SettingError) as e:
        mqttconf.configure(None, "mqtt.pasword", "x")
    hint = refusals.hint(LinkError("config_invalid", str(e.value), e.value.facts))
    assert hint == "did you mean mqtt.password?"


def _parse_error(capsys, *argv):
    """mjctl's main() here, stopped by its parser: (exit code, stderr lines)."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        mjctl.main(list(argv))
    return stop.value.code, capsys.readouterr().err.splitlines()


def test_a_mistyped_command_gets_did_you_mean(capsys, each_lang):
    code, err = _parse_error(capsys, "--lang", each_lang, "stauts")
    assert code == 1 and err[-1] == "mjctl: " + texts.t("hint.did_you_mean", word="status")
    code, err = _parse_error(capsys, "--lang", each_lang, "--sim", "jog", "lnae", "1", "100")
    assert code == 1 and err[-1] == "mjctl: " + texts.t("hint.did_you_mean", word="lane")
    # Nothing near: no guess.
    code, err = _parse_error(capsys, "--lang", each_lang, "xyzzy")
    guess = "mjctl: " + texts.t("hint.did_you_mean", word="")[:3]
    assert code == 1 and "xyzzy" in err[-1] and not any(line.startswith(guess) for line in err)


def test_a_number_for_a_text_key_is_told_to_be_quoted_before_anything_is_sent(
        capsys, tmp_path, each_lang):
    # The firmware refuses it, saying only its length: so mjctl says it first.
    with pytest.raises(SettingError) as refused:
        mqttconf.configure(None, "mqtt.password", 1234)
    assert refused.value.facts == {"why": "text", "key": "mqtt.password", "hi": 64}
    key = tmp_path / "t.key"
    key.write_bytes(bytes(32))
    nowhere = str(tmp_path / "no-such-port")
    code, out, err = run(capsys, "--lang", each_lang, "--port", nowhere, "--key", str(key),
                         "config", "set",
                         "mqtt.password", "1234")
    assert code == 1 and err == ["mjctl: " + texts.t("err.config_quote", key="mqtt.password",
                                                      value="1234")]
    assert "'\"1234\"'" in err[0]
    assert hints.unquoted_text("ruleset", 144) and hints.unquoted_text("mqtt.user", True)
    # A quoted number, a number for a number key, a bare word: sent as they are.
    assert not hints.unquoted_text("mqtt.password", "1234")
    assert not hints.unquoted_text("timings.lift_up_ms", 4200)
    assert not hints.unquoted_text("mqtt.port", 1883)
    code, out, err = run(capsys, "--lang", each_lang, "--port", nowhere, "--key", str(key),
                         "config", "set",
                         "mqtt.password", '"1234"')
    # Quoted, it goes on to the port (here none).
    assert code == 1 and err == ["mjctl: " + texts.t("err.port_missing", port=nowhere)]
