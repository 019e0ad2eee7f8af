"""Both languages whole: every text key and every fault code in English and
in Chinese, the same fields in each, the language chosen as documented, and
mjctl and the table view speaking Chinese with no English label left."""

import io
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from host_tools.texts import faults as fault_table

from host_tools.view import tableview

from host_tools import texts
from host_tools.image.mpenv import ROOT
from host_tools.texts import en, zh

CJK = texts.CJK


@pytest.fixture
def chinese():
    texts.set_lang("zh")
    yield
    texts.set_lang("en")


def fields(fmt):
    return {name for _, name, _, _ in string.Formatter().parse(fmt) if name is not None}


# -- the tables ----------------------------------------------------------------

def test_every_key_is_in_both_languages_with_the_same_fields():
    assert set(en.TEXTS) - set(zh.TEXTS) == set()
    assert set(zh.TEXTS) - set(en.TEXTS) == set()
    for key, text in en.TEXTS.items():
        assert fields(text) == fields(zh.TEXTS[key]), key


def test_every_chinese_text_is_chinese():
    # A text left in English (or copied over) would pass the key check;
    # one of no words at all ("-", "[{i}/{n}] {path}") is the same in both.
    for key, text in zh.TEXTS.items():
        if not key.startswith(("view.speed", "view.seed")):
            words = re.sub(r"\{[^}]*\}", "", text)
            assert CJK.search(text) or not re.search("[A-Za-z]", words), (key, text)


def test_every_fault_of_the_firmware_has_its_chinese_and_none_is_stale():
    assert sorted(zh.FAULTS) == sorted(fault_table.codes())
    names = [name for name, _, _ in zh.FAULTS.values()]
    assert len(set(names)) == len(names)
    for code, (name, cause, fix) in zh.FAULTS.items():
        assert CJK.search(name) and CJK.search(cause) and CJK.search(fix), code
        # Commands and files the English names are named in Chinese too.
        _, cause_en, fix_en = fault_table.describe(code)
        for quoted in re.findall(r"`[^`]+`|config\.json", cause_en + fix_en):
            assert quoted in cause + fix, (code, quoted)


def test_every_key_the_code_uses_is_in_the_tables():
    used = set()
    for path in Path(ROOT, "host_tools").rglob("*.py"):
        if "tests" in path.parts:
            continue
        used |= set(re.findall(r"\b(?:t|tx|texts\.t)\(\s*\"([a-z_.]+)\"", path.read_text()))
    prefixes = {k for k in used if k.endswith((".", "_"))}   # t("part." + kind)
    assert used and used - prefixes - set(en.TEXTS) == set()
    for prefix in prefixes:
        assert any(k.startswith(prefix) for k in en.TEXTS), prefix


def test_every_name_the_link_sends_has_its_words():
    from engine_core.hand import PHASE_NAMES
    from firmware.controller import builder, hand_events, table
    from firmware.drivers import motion
    from host_tools.sim.display import ALERTS
    kinds = {"state": table.NAMES, "build": builder.NAMES + ("none",), "lift": motion.NAMES,
             "phase": PHASE_NAMES, "view.phase": PHASE_NAMES, "op": hand_events.OPS,
             "alert": [a for a in ALERTS if a != "none"]}
    for kind, names in kinds.items():
        for name in names:
            assert "%s.%s" % (kind, name) in en.TEXTS, (kind, name)


def _why_words():
    """Every reason word the controller's code can send (`why`: a
    refusal's, a config checker's), read from its sources: the facts'
    literals, the config checker's words, session's rejections, and the
    words of a service work refused (controller/service_work.py)."""
    found = set()
    pattern = re.compile(r'"why": "([a-z0-9_]+)"|_error\("([a-z0-9_]+)"|return "(pin_[a-z0-9_]+)"'
                         r'|_rejected\(link, now, what, "([a-z_]+)"')
    for folder in ("firmware", "engine_core"):
        for path in Path(ROOT, folder).rglob("*.py"):
            if "tests" not in path.parts:
                for groups in pattern.findall(path.read_text(encoding="utf-8")):
                    found |= {g for g in groups if g}
    work = Path(ROOT, "firmware", "controller", "service_work.py").read_text(encoding="utf-8")
    return found | set(re.findall(r'return "([a-z_]+)"', work))


def test_every_reason_the_controller_sends_is_said_in_both_languages_and_documented():
    words = _why_words()
    assert {"locked", "at_switch", "range", "pin_strap", "bad_mac", "working"} <= words, words
    doc = Path(ROOT, "docs", "protocol.md").read_text(encoding="utf-8")
    table = doc[doc.index("| `why` | facts |"):]
    table = table[:table.index("\n\n")]
    documented = set(re.findall(r"`([a-z0-9_]+)`", "\n".join(
        line.split("|")[1] for line in table.splitlines()[2:])))
    assert documented == words
    for word in words:
        assert "why." + word in en.TEXTS and "why." + word in zh.TEXTS, word


def test_every_request_a_refusal_names_has_its_words():
    from firmware.link.protocol import REQUESTS
    for line in REQUESTS.splitlines():
        op, who = line.split()[:2]
        if who != "anyone" or op.startswith("service_"):
            assert "request." + op in en.TEXTS, op


def test_the_language_comes_from_lang_else_the_locale_else_english(monkeypatch):
    assert texts.lang_from_env({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert texts.lang_from_env({"LANG": "zh_TW.UTF-8"}) == "zh"
    assert texts.lang_from_env({"LANG": "C.UTF-8"}) == "en"
    assert texts.lang_from_env({"LANG": "C"}) == "en"
    assert texts.lang_from_env({"LANG": "en_US.UTF-8"}) == "en"
    assert texts.lang_from_env({}) == "en"
    # LC_ALL over LC_MESSAGES over LANG, as gettext reads them.
    assert texts.lang_from_env({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert texts.lang_from_env({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "C"}) == "zh"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    try:
        texts.set_lang(None)
        assert texts.lang() == "zh" and texts.t("state.idle") == "空闲"
        texts.set_lang("en")                       # --lang en wins over the locale
        assert texts.t("state.idle") == "idle"
    finally:
        texts.set_lang("en")
    with pytest.raises(ValueError):
        texts.set_lang("fr")


def test_fault_texts_in_each_language(chinese):
    name, cause, fix = texts.fault_texts(10)
    assert name == "牌道卡牌 lane_jam" and cause == zh.FAULTS[10][1] and fix == zh.FAULTS[10][2]
    assert texts.fault_texts(99) == ("未知故障", "本固件的故障表里没有故障码 99",
                                     zh.TEXTS["fault.unknown.fix"])
    texts.set_lang("en")
    assert texts.fault_texts(10) == fault_table.describe(10)
    assert texts.fault_texts(99)[1] == "fault code 99 is not in this firmware's table"


# -- what a technician sees ------------------------------------------------------

def run(cmd, lang_env=None, timeout=90):
    env = dict(os.environ)
    env.pop("LC_ALL", None)
    env.pop("LC_MESSAGES", None)
    env["LANG"] = lang_env or "C.UTF-8"
    p = subprocess.run([sys.executable, "-m"] + cmd, cwd=str(ROOT), capture_output=True,
                       text=True, timeout=timeout, env=env)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def english_words(text):
    """The English words of a text, backticked commands, identifiers, a
    fault's detail (the link's own fields) and units aside."""
    text = re.sub(r"`[^`]*`|\{[^}]*\}|\S*_\S*|MicroPython|\bms\b|\brev\b", " ", text)
    return set(re.findall(r"\b[a-z]{3,}\b", text))


def test_mjctl_in_chinese_status_and_a_fault():
    p = run(["host_tools.cli.mjctl", "--lang", "zh", "--sim", "status"])
    assert p.returncode == 0, p.stderr
    assert "状态" in p.stdout and "空闲" in p.stdout and "运行时间" in p.stdout
    assert "固化镜像" in p.stdout and "计数器" in p.stdout
    labels = {line.split()[0] for line in p.stdout.splitlines() if line.strip()}
    assert not labels & {"state", "phase", "cycles", "uptime", "counters", "runtime"}, labels
    # A zh_* locale alone gives Chinese; the fault with its Chinese cause and fix.
    p = run(["host_tools.cli.mjctl", "--sim", "--fault", "lane_jam:1", "cycle"], "zh_CN.UTF-8")
    assert p.returncode == 1, p.stderr
    assert "本轮中止" in p.stdout and "故障 10 牌道卡牌 lane_jam" in p.stdout
    body = " ".join(p.stdout.split())           # rich wraps long lines
    assert " ".join(zh.FAULTS[10][1].split()) in body.replace(" ", "") or \
        zh.FAULTS[10][1] in p.stdout.replace("\n", "")
    assert "原因" in p.stdout and "处理" in p.stdout
    assert english_words(p.stdout) == set(), english_words(p.stdout)
    # --lang en over the locale: today's English.
    p = run(["host_tools.cli.mjctl", "--lang", "en", "--sim", "--fault", "lane_jam:1", "cycle"],
            "zh_CN.UTF-8")
    assert "cycle stopped" in p.stdout and "fault 10 lane_jam" in p.stdout
    assert not CJK.search(p.stdout)


def test_mjctl_selftest_lines_in_chinese():
    p = run(["host_tools.cli.mjctl", "--lang", "zh", "--sim", "--fault", "lift_stuck:1", "selftest"])
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("大盘") and "通过" in lines[0]
    row = next(line for line in lines if line.startswith("1号升降台"))
    assert "失败" in row and "升降台卡住 lift_stuck" in row
    assert lines[-1] == "自检：9 项中 1 项失败"
    assert "PASS" not in p.stdout and "FAIL" not in p.stdout
    assert "原因 没有离开下限位开关" in row, row       # the lifter's reason in words
    assert english_words(p.stdout) == set(), english_words(p.stdout)


def _render(snap, width):
    from rich.console import Console
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=True, color_system="truecolor")
    console.print(tableview.render(snap, width))
    return console, re.sub(r"\x1b\[[0-9;]*m", "", buf.getvalue())


@pytest.mark.parametrize("width", [80, 120])
def test_the_table_view_in_chinese_fits_and_has_no_english_label(chinese, width):
    from host_tools.tests.tableview_helpers import _full_view
    from host_tools.sim import VirtualTable

    tv = VirtualTable(3)
    view = _full_view()
    view.hand = {"n": 7, "op": "draw", "phase": "play", "wall": 60, "reserve": 18,
                 "drawable": 42, "gold": "3p", "marker": [1, 3], "head": [2, 4], "tail": [1, 9]}
    view.hand_events.append({"t": 1, "op": "draw", "seat": 2})
    console, text = _render(tableview.snapshot(tv, view), width)
    assert all(console.measure(line).maximum <= width for line in text.splitlines())
    assert len(text.splitlines()) <= 45
    for want in ("福州麻将机", "牌道：牌墙", "升降台", "大盘", "显示板", "控制器", "故障停机",
                 "牌道卡牌 lane_jam", "原因", "处理", zh.FAULTS[10][2][:12], "留牌 18",
                 "可摸 42", "行牌", "摸牌 2", "2号位胡牌 → 庄家 3号位，连庄 0"):
        assert want in text.replace(" ", "") or want in text, want
    # Event lines keep the link's own names (state, walls, fault...);
    # everything else is Chinese.
    panels = text.split("通信：")[0]
    assert english_words(panels) - {"build", "image", "mpy"} == set(), \
        english_words(panels)


def test_make_run_in_chinese_from_the_locale():
    p = run(["host_tools.view.tableview", "--speed", "200", "--cycles", "1", "--fault", "lane_jam:1"],
            "zh_CN.UTF-8")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("# 虚拟牌桌，种子 0") and lines[-1].startswith("# 1 轮后停止")
    i = next(i for i, line in enumerate(lines) if "  fault " in line)
    assert lines[i + 1].split() == ["原因：", zh.FAULTS[10][1]]
    assert lines[i + 2].split() == ["处理：", zh.FAULTS[10][2]]
    assert any(line.startswith("# 第 1 轮：骰子 ") for line in lines)


# -- the Chinese guide -----------------------------------------------------------

def test_the_chinese_guide_lists_every_fault_and_is_linked():
    guide = Path(ROOT, "docs", "zh", "technician.md").read_text()
    rows = {int(m.group(1)): m.group(0) for m in
            re.finditer(r"^\| (\d+) \|.*$", guide, re.M)}
    assert sorted(rows) == sorted(fault_table.codes())
    for code, (name, _, _) in zh.FAULTS.items():
        assert name in rows[code] and fault_table.name_of(code) in rows[code], code
    for doc in ("README.md", "docs/technician.md"):
        assert "docs/zh/technician.md" in Path(ROOT, doc).read_text() or \
            "zh/technician.md" in Path(ROOT, doc).read_text(), doc


def _resume_reasons():
    """Every reason word power_lost can carry (firmware/controller/resume.py:
    the words it returns or stops with)."""
    src = (ROOT / "firmware" / "controller" / "resume.py").read_text(encoding="utf-8")
    words = set(re.findall(r'return "(\w+)"', src))
    words |= set(re.findall(r'gave_up\(ctl, now, "([\w ]+)"', src))
    words |= set(re.findall(r'"(restarted during a \w+)"', src))
    words |= set(re.findall(r'"reason": "(\w+)"', src))
    return words


def test_every_power_lost_reason_has_its_cause_and_a_resumed_one_its_fix_in_both_languages():
    reasons = _resume_reasons()
    assert {"mid_lift", "mid_build", "restarted during a cycle", "not_whole"} <= reasons
    assert "not_up" not in reasons and "resume.not_up" not in en.TEXTS
    for lang in ("en", "zh"):
        texts.set_lang(lang)
        try:
            for reason in reasons:
                cause, fix = texts.reason_texts(reason)
                assert cause, (lang, reason)
                # The reasons a clear resumes say what to do; the others
                # are the fault's own fix (a hand lost).
                assert (fix is not None) == (reason in ("mid_lift", "mid_build")), (lang, reason)
        finally:
            texts.set_lang("en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mjctl_shows_a_resumed_cycle_s_reason_and_its_fix(lang):
    from rich.console import Console
    from host_tools.cli.common import human_fault
    texts.set_lang(lang)
    try:
        out = io.StringIO()
        human_fault(Console(file=out, width=200), {"code": 41, "detail": {
            "reason": "mid_build", "count": [36, 20, 7, 0], "lane": [2]}})
        cause, fix = texts.reason_texts("mid_build")
        shown = re.sub(r"\s", "", out.getvalue())
        assert re.sub(r"\s", "", cause) in shown and re.sub(r"\s", "", fix) in shown, shown
    finally:
        texts.set_lang("en")
