"""The practice table of `mjctl --sim serve` (host_tools/sim/practice.py,
docs/technician.md, Practise a repair): the technician's jog of the part
a fault holds is its repair, a typed line repairs what no jog shows, and
the walk-through of each guide (docs/technician.md, docs/zh/technician.md),
fault to cleared table to the next hand, runs as it says, in its
language."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from host_tools import texts
from host_tools.cli import mjctl
from host_tools.link import mux as linkmux
from host_tools.link.client import LinkClient
from host_tools.sim import VirtualTable
from host_tools.sim.practice import PracticeHands

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _table(*faults):
    texts.set_lang("en")                 # the lines are compared in English
    table = VirtualTable(3, faults=faults)
    said = []
    return table, PracticeHands(table, said.append), said


def _out(table, label, value):
    cfg = table.config
    name, _, index = label.partition(":")
    table.set_output(cfg.pin(name, int(index) if index else None), value)


def test_a_jog_of_the_jammed_lane_alone_is_its_repair_and_a_build_is_not():
    table, _, said = _table("lane_jam:1")
    _out(table, "lane_feed:1", 1)           # a build: lanes and plate in one tick
    _out(table, "plate_motor", 800)
    table.advance_to(table.now + 500)
    assert table.active_faults == ["lane_jam:1"]
    _out(table, "plate_motor", 0)
    _out(table, "lane_feed:1", 0)
    _out(table, "lane_feed:2", 1)           # the wrong lane: the jam stays
    table.advance_to(table.now + 500)
    assert table.active_faults == ["lane_jam:1"] and not said
    _out(table, "lane_feed:2", 0)
    _out(table, "lane_feed:1", 1)           # the technician's jog of lane 1
    table.advance_to(table.now + 500)
    assert table.active_faults == [] and "lane_jam:1" in said[0]


def test_a_jog_of_the_plate_with_every_lane_still_frees_a_stalled_plate():
    table, _, said = _table("plate_stall")
    _out(table, "plate_motor", 800)
    table.advance_to(table.now + 300)
    assert table.active_faults == [] and table.plate.turning


def test_typed_lines_repair_inject_and_list_in_the_tables_thread():
    table, hands, said = _table("sensor_stuck:lane_count:2:1", "rfid_timeout")
    hands.ask("repair rfid_timeout")
    hands.ask("faults")
    table.advance_to(table.now + 1)
    assert table.active_faults == ["sensor_stuck:lane_count:2:1"]
    assert said[0] == "repaired: rfid_timeout; now clear the table's fault (mjctl clear)"
    assert said[1] == "injected now: sensor_stuck:lane_count:2:1"
    hands.ask("inject lane_jam:9")
    hands.ask("inject lane_jam:0")
    hands.ask("repair")
    hands.ask("repair lane_jam")
    hands.ask("what")
    table.advance_to(table.now + 1)
    assert said[2].startswith("not injected: fault lane_jam needs a side 0..3")
    assert said[3] == "injected: lane_jam:0"
    assert "sensor_stuck:lane_count:2:1" in said[4] and "lane_jam:0" in said[4]
    assert said[5].startswith("nothing repaired") and said[6].startswith("commands: repair")
    assert table.active_faults == []


def _mjctl(capsys, *argv):
    capsys.readouterr()
    code = mjctl.main(list(argv))
    out, err = capsys.readouterr()
    return code, " ".join((out + err).split())


def _walk_through(lang):
    """{command as the guide types it: the line the guide shows after it}
    of the walk-through in the guide of `lang` (Practise a repair)."""
    guide = Path(ROOT, "docs", *(["zh"] if lang == "zh" else []), "technician.md")
    lines = guide.read_text(encoding="utf-8").splitlines()
    shown = {}
    for i, line in enumerate(lines):
        if line.startswith("    $ mjctl ") and "practice.key" in line or line in (
                "    $ mjctl start", "    $ mjctl clear"):
            shown.setdefault(line[6:], lines[i + 1].strip())
    return shown


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_guides_walk_through_fault_to_cleared_table_to_the_next_hand(tmp_path, capsys, lang):
    """Each guide's steps, typed in its language, print what it shows."""
    shown = _walk_through(lang)
    jog = "mjctl --key keys/practice.key jog lane 1 500"
    assert {"mjctl start", jog, "mjctl clear"} <= set(shown), shown
    key = tmp_path / "practice.key"
    serve = subprocess.Popen(
        [sys.executable, "-m", "host_tools.cli.mjctl", "--sim", "--seed", "3", "--fault",
         "lane_jam:1", "serve", "--players", "--speed", "100", "--key", str(key), "--json"],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        port = json.loads(serve.stdout.readline())["link"]
        with LinkClient(linkmux.shared(port)) as watch:
            watch.hello()
            code, out = _mjctl(capsys, "--lang", lang, "--port", port, "start")
            assert code == 0 and out == shown["mjctl start"], out
            fault = watch.wait_event(lambda e: e["ev"] == "fault", timeout=60)
            assert fault["name"] == "lane_jam" and fault["detail"]["lane"] == 1
            code, out = _mjctl(capsys, "--lang", lang, "--port", port, "--key", str(key), "jog",
                               "lane", "1", "500")
            assert code == 0 and out == " ".join(shown[jog].split()), out
            line = json.loads(serve.stdout.readline())["practice"]
            assert "lane_jam:1" in line, line
            code, out = _mjctl(capsys, "--lang", lang, "--port", port, "clear")
            assert code == 0 and out == shown["mjctl clear"], out
            watch.wait_event(lambda e: e["ev"] == "dice", timeout=60)
            result = watch.wait_event(lambda e: e["ev"] == "result", timeout=120)
            nxt = watch.wait_event(lambda e: e["ev"] == "state", timeout=60)
            assert nxt["state"] in ("lifting", "building"), nxt      # the next hand's walls
            assert not any(e["ev"] == "fault" for e in watch.events(timeout=0)), result
    finally:
        texts.set_lang("en")
        serve.send_signal(signal.SIGINT)
        serve.communicate(timeout=15)
