"""The day's figures (host_tools/fleet/days.py and the model's part): hands
and faults by the tables' counters, times in play, stopped and offline,
kept in SQLite across the page's restarts and by day; the order the owner
reads the tables in; `mjctl fleet --day D --csv` and its errors; mjctl's
view within 80 columns."""

import csv
import io
import json
import os
import subprocess
import sys
import time

import pytest
from rich.cells import cell_len
from rich.console import Console

from host_tools import texts
from host_tools.cli.fleet import render
from host_tools.fleet import days
from host_tools.fleet.days import Store
from host_tools.fleet.model import by_need
from host_tools.tests import fleet_scene
from host_tools.tests.fleet_scene import Scene
from host_tools.texts import en, zh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MJCTL = [sys.executable, "-m", "host_tools.cli.mjctl"]


@pytest.fixture(scope="module")
def scene():
    return Scene()


def tables(snap):
    return {tb["id"]: tb for tb in snap["tables"]}


def test_a_counter_rises_from_its_mark_and_from_zero_after_a_reset():
    assert days.rise(None, 40) == (0, 40)          # first seen: counts from here
    assert days.rise(40, 43) == (3, 43)
    assert days.rise(43, 2) == (2, 2)              # reset: from zero


def test_a_day_is_a_date_that_exists():
    assert days.parse_day("2026-12-05") == "2026-12-05"
    for bad in ("2026-02-30", "2026-12-5", "yesterday", "", "2026-12-05x"):
        with pytest.raises(ValueError):
            days.parse_day(bad)
    assert days.days_before("2026-03-01", 3) == ["2026-02-27", "2026-02-28", "2026-03-01"]


def test_the_scene_gives_each_table_its_counters_rise_and_its_times(scene):
    snap = scene.dash.snapshot()
    tb = tables(snap)
    for tid in fleet_scene.TABLES:
        today = tb[tid]["today"]
        assert (today["hands"], today["faults"]) == (scene.expected[tid]["hands"],
                                                     scene.expected[tid]["faults"]), tid
        assert today["in_play_s"] == scene.in_play_s(tid), tid
    for tid, (_, _, ago) in fleet_scene.FAULTED.items():
        assert tb[tid]["today"]["stopped_s"] == ago
        assert snap["now"] - tb[tid]["fault"]["since"] == ago
    for tid, (why, ago) in fleet_scene.OFFLINE.items():
        assert tb[tid]["offline"] == why and tb[tid]["today"]["offline_s"] == ago
        assert snap["now"] - tb[tid]["offline_since"] == ago
    assert snap["today"]["hands"] == sum(e["hands"] for e in scene.expected.values())


def test_the_tables_that_need_the_owner_come_first(scene):
    order = [tb["id"] for tb in by_need(scene.dash.snapshot()["tables"])]
    assert order[:3] == ["t7", "t19", "t33"]                 # in fault
    assert order[3:5] == ["t5", "t26"]                       # offline
    assert order[5:10] == fleet_scene.IDLE                   # idle
    assert order[10:] == [t for t in fleet_scene.TABLES if t not in order[:10]]


def test_the_figures_outlast_a_restart_of_the_page(tmp_path):
    """The page stops and starts again: today's figures, the counters'
    marks, the dealer and since when a fault began come back from the
    store; hands played while it was down count."""
    path = tmp_path / "days.sqlite"
    first = Scene(Store(path))
    first.dash.keep()
    before = tables(first.dash.snapshot())
    again = Scene.__new__(Scene)              # a new page process, the same clock
    again.clock = first.clock
    from host_tools.fleet.page import Dashboard
    dash = Dashboard(0, ("dashboard", "-"), expect=[("hall", t) for t in fleet_scene.TABLES],
                     store=Store(path), clock=first.clock, wall=first.clock.wall)
    first.clock.mono += 30
    c = dict(first.counters["t7"], hands=first.counters["t7"]["hands"] + 2)
    for leaf, data in (("counters", c), ("state", {"state": "fault", "fault": 10, "t": 1})):
        dash.feed("parlour/hall/table/t7/" + leaf, json.dumps(data).encode())
    after = tables(dash.snapshot())
    assert after["t7"]["today"]["hands"] == before["t7"]["today"]["hands"] + 2
    assert after["t7"]["fault"]["since"] == before["t7"]["fault"]["since"]
    assert after["t3"]["dealer"] == before["t3"]["dealer"] is not None
    assert after["t3"]["hands_today"] == before["t3"]["hands_today"]   # not heard yet: kept
    assert after["t1"]["today"]["in_play_s"] == before["t1"]["today"]["in_play_s"]


def test_a_new_day_begins_at_midnight_and_the_last_one_is_kept(tmp_path):
    store = Store(tmp_path / "days.sqlite")
    scene = Scene(store)
    scene.at(15 * 3600)                       # 00:00 the next day, every table silent since
    scene.next_health = 15 * 3600
    scene.until(15 * 3600 + 60)
    scene.count("t1", hands=2)
    scene.dash.keep()
    old, new = store.day(fleet_scene.DAY), store.day("2026-12-06")
    t1_old = [r for r in old if r["tbl"] == "t1"][0]
    t1_new = [r for r in new if r["tbl"] == "t1"][0]
    assert t1_old["hands"] == scene.expected["t1"]["hands"] - 2 and t1_new["hands"] == 2
    assert t1_new["in_play_s"] <= 60 + fleet_scene.HEALTH_S


def test_the_csv_has_a_header_and_a_line_per_table_in_each_language(scene):
    rows = scene.dash.day_rows(fleet_scene.DAY)
    for lang, table in (("en", en.TEXTS), ("zh", zh.TEXTS)):
        lines = list(csv.reader(io.StringIO(days.csv_text(rows, lang))))
        assert lines[0] == table["fleet.csv_header"].split(",")
        assert [line[2] for line in lines[1:]] == fleet_scene.TABLES
    by_table = {line[2]: line for line in csv.reader(io.StringIO(days.csv_text(rows, "en")))}
    t7 = by_table["t7"]
    assert t7[:4] == [fleet_scene.DAY, "hall", "t7", str(scene.expected["t7"]["hands"])]
    assert t7[5] == "1" and float(t7[6]) == 12.0          # one fault, 12 minutes stopped
    assert float(t7[4]) == round(scene.in_play_s("t7") / 3600.0, 2)


def mjctl(*args, lang="en"):
    env = dict(os.environ, LANG="zh_CN.UTF-8" if lang == "zh" else "C.UTF-8")
    env.pop("LC_ALL", None)
    return subprocess.run(MJCTL + list(args), cwd=ROOT, capture_output=True, text=True,
                          timeout=60, env=env)


def test_mjctl_fleet_day_csv_reads_the_store(tmp_path):
    path = tmp_path / "days.sqlite"
    scene = Scene(Store(path))
    scene.dash.keep()
    p = mjctl("fleet", "--day", fleet_scene.DAY, "--csv", "--store", str(path))
    assert p.returncode == 0, p.stderr
    lines = list(csv.reader(io.StringIO(p.stdout)))
    assert lines[0] == en.TEXTS["fleet.csv_header"].split(",") and len(lines) == 41
    assert {line[2]: int(line[3]) for line in lines[1:]} == \
        {tid: e["hands"] for tid, e in scene.expected.items()}
    p = mjctl("fleet", "--day", fleet_scene.DAY, "--store", str(path), lang="zh")
    assert p.returncode == 0 and zh.TEXTS["fleet.parlour"] in p.stdout, p.stderr


@pytest.mark.parametrize("args, code, key", [
    (("--day", "2026-13-01", "--csv"), 1, "err.fleet_day"),
    (("--day", "monday"), 1, "err.fleet_day"),
    (("--csv",), 1, "err.fleet_csv"),
])
def test_a_bad_day_is_a_clear_error_never_a_traceback(args, code, key):
    p = mjctl("fleet", *args)
    assert p.returncode == code and "Traceback" not in p.stderr, p.stderr
    assert en.TEXTS[key].split("{")[0].strip() in p.stderr, p.stderr


def test_a_store_that_is_not_there_is_a_clear_error(tmp_path):
    p = mjctl("fleet", "--day", "2026-12-05", "--csv", "--store", str(tmp_path / "none.sqlite"))
    assert p.returncode == 3 and "Traceback" not in p.stderr, p.stderr
    assert "none.sqlite" in p.stderr


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_mjctl_fleets_view_fits_80_columns_with_every_header_whole(scene, lang):
    texts.set_lang(lang)
    try:
        buf = io.StringIO()
        Console(file=buf, width=80).print(render(scene.dash.snapshot()))
        heads = [texts.t(k) for k in ("fleet.col.table", "fleet.col.status", "fleet.col.dealer",
                                      "fleet.col.hands", "fleet.col.in_play", "fleet.col.stopped")]
        stopped = texts.t("fleet.stopped_for", d=texts.duration(12 * 60))
    finally:
        texts.set_lang("en")
    out = buf.getvalue()
    assert max(cell_len(line) for line in out.splitlines()) <= 80
    head = [line for line in out.splitlines() if heads[0] in line][0]
    assert all(h in head for h in heads), head
    rows = [line.split()[0] for line in out.splitlines() if line.split() and
            line.split()[0] in fleet_scene.TABLES]
    assert rows[:5] == ["t7", "t19", "t33", "t5", "t26"], rows
    assert stopped in out
