"""The table's refusals as a Chinese-speaking technician meets them: each
typed as in docs/zh/technician.md, against a served virtual table, under
`--lang zh`; each line says what was refused and why in Chinese, from the
reason's facts, with its code in parentheses and the next step, and no
English word but the commands and keys to type."""

import re

from host_tools import texts
from host_tools.tests.mjctl_cli_helpers import (  # noqa: F401  (table: a fixture)
    run, still, table)
from host_tools.tests.test_texts import english_words
from host_tools.texts import zh


def _english(line):
    """The English words of a line, what a technician types aside: the
    command (mjctl ..., make ...), config keys, a port, the code in
    parentheses."""
    line = re.sub(r"(?:mjctl|make)(?: [a-z_]+)*|[a-z]+\.[\w.\[\]]+|/dev/\S+|（[a-z_]+）", " ", line)
    return english_words(line)


def _refused(capsys, link, key, *argv):
    code, out, err = run(capsys, "--lang", "zh", "--port", link, "--key", key, *argv)
    texts.set_lang("en")
    assert code == 2 and len(err) == 1 and err[0].startswith("mjctl: "), (argv, code, err)
    line = err[0][len("mjctl: "):]
    assert texts.CJK.search(line) and _english(line) == set(), (argv, line, _english(line))
    return line


def test_each_refusal_a_technician_meets_reads_in_chinese(table, capsys, tmp_path):
    link, key = table
    line = _refused(capsys, link, key, "jog", "lift_down", "1", "100")
    assert line.startswith("1号升降台已经在下限位开关（refused）"), line
    assert "mjctl jog lift_up 1" in line
    line = _refused(capsys, link, key, "config", "set", "timings.lift_up_ms", "99999")
    assert line.startswith(zh.TEXTS["why.range"].format(
        key="timings.lift_up_ms", lo=500, hi=20000, got=99999) + "（config_invalid）"), line
    line = _refused(capsys, link, key, "config", "set", "mqtt.port", "0")
    assert "mqtt.port" in line and "1..65535" in line, line
    line = _refused(capsys, link, key, "config", "set", "mqtt.host", '"tablehost"')
    assert line.startswith(zh.TEXTS["why.ipv4"].format(key="mqtt.host")), line
    line = _refused(capsys, link, key, "config", "set", "timings.lift_upp_ms", "4200")
    assert "timings.lift_upp_ms" in line and "timings.lift_up_ms" in line, line   # did you mean
    # A wrong key (the lockout it starts passes in a fraction of a second
    # here: test_hints drives it in the firmware's virtual time).
    wrong = tmp_path / "wrong.key"
    wrong.write_bytes(bytes(32))
    line = _refused(capsys, link, str(wrong), "jog", "plate", "100")
    assert line.startswith(zh.TEXTS["why.wrong_key"] + "（auth_failed）"), line
    still(link)
    # A cycle running: no second start, no jog.
    code, out, err = run(capsys, "--port", link, "start")
    assert code == 0, err
    line = _refused(capsys, link, key, "start")
    assert line.startswith(zh.TEXTS["why.not_idle"].format(state="码牌中")), line
    line = _refused(capsys, link, key, "jog", "plate", "100")
    assert line.startswith(zh.TEXTS["why.not_still"].format(op="点动", state="码牌中")), line


def test_a_port_busy_or_gone_is_said_in_chinese():
    import errno

    import serial

    from host_tools.cli import mjctl
    from host_tools.link.client import LinkError
    texts.set_lang("zh")
    try:
        # pyserial's own exception for a port another program holds ...
        busy = serial.SerialException(errno.EBUSY, "could not open port /dev/ttyACM0: [Errno 16]"
                                      " Device or resource busy: '/dev/ttyACM0'")
        code, line = mjctl.serial_error(busy, "/dev/ttyACM0")
        # ... and the client's, for a cable pulled while it read.
        gone = LinkError("closed", "serial port failed: [Errno 5] Input/output error")
        code_gone, line_gone = mjctl.link_error(gone, "/dev/ttyACM0")
    finally:
        texts.set_lang("en")
    assert code == mjctl.EXIT_INPUT and zh.TEXTS["oserr.EBUSY"] in line, line
    assert code_gone == mjctl.EXIT_NO_ANSWER and zh.TEXTS["oserr.EIO"] in line_gone, line_gone
    assert _english(line) == set() and _english(line_gone) == set(), (line, line_gone)


def test_another_protocol_and_no_heap_are_said_in_chinese():
    from host_tools.cli import mjctl
    from host_tools.link.client import LinkError, _mismatch
    texts.set_lang("zh")
    try:
        old = mjctl.link_error(_mismatch(11, 12, {"proto": 11}), "/dev/ttyACM0")[1]
        new = mjctl.link_error(_mismatch(13, 12, {"proto": 13}), "/dev/ttyACM0")[1]
        heap = mjctl.link_error(LinkError("internal", "out of memory for this answer: ask again",
                                          {"why": "no_heap"}), "/dev/ttyACM0")[1]
    finally:
        texts.set_lang("en")
    assert old.startswith(zh.TEXTS["why.proto"].format(got=11, hi=12,
                                                       other=zh.TEXTS["side.firmware"])), old
    assert zh.TEXTS["side.host_tools"] in new, new
    assert heap.startswith(zh.TEXTS["why.no_heap"]), heap
    for line in (old, new, heap):
        assert _english(line) - {"git", "pull"} == set(), line      # a command to type
