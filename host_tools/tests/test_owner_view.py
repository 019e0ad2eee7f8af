"""The parlour page as its owner reads it (docs/fleet.md, The parlour page),
in Debian's headless Chromium at 1280x900 (host_tools/fleet/browser.py):
40 tables on one screen, those in fault, then offline, then idle first,
each with how long, in Chinese with no English word left and in English;
a table's card on a click; the day's figures on the page and in its CSV
equal to the tables' counters; the tables at every load, "connecting…"
until the first state, a lost broker and a lost page server said, and
the stream opened again. The tables are a model-fed scene (fleet_scene.py:
40 tables' messages of a morning on a clock the test moves), no firmware.
Screenshots go to artifacts/ (git-ignored)."""

import csv
import io
import re
import threading
import time

import pytest

from host_tools import texts
from host_tools.fleet import browser
from host_tools.fleet.days import Store
from host_tools.fleet.page import PageServer
from host_tools.image.mpenv import ROOT
from host_tools.tests import fleet_scene
from host_tools.tests.fleet_scene import Scene
from host_tools.texts import LANGS

ARTIFACTS = ROOT / "artifacts"
WAIT_S = 20.0              # the browser's own time, at most
LOADS = 20

TILES_JS = """
return [...document.querySelectorAll("section.tile")].map(s => {
    const r = s.getBoundingClientRect(), q = c => (s.querySelector(c) || {}).textContent || "";
    return {id: s.id.replace("table-hall-", ""), bottom: r.bottom, right: r.right,
            how_long: q(".how-long"), visible: s.innerText};
});
"""
PAGE_JS = """
return {height: window.innerHeight, width: window.innerWidth,
        status: document.getElementById("status").textContent,
        stale: document.getElementById("tables").className,
        visible: ["title", "summary", "status", "daybar", "tables"].map(
                 id => document.getElementById(id).innerText).join(" ")};
"""


@pytest.fixture
def scene(tmp_path):
    """A fresh morning each: a test moves its clock."""
    return Scene(Store(tmp_path / "days.sqlite"))


@pytest.fixture(scope="module")
def drv(tmp_path_factory):
    browser.install()
    with browser.chromium(str(tmp_path_factory.mktemp("profile"))) as d:
        yield d


def wait_for(drv, what, pred):
    """Polls the page (it renders each push) until pred(drv)."""
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        if pred(drv):
            return
        time.sleep(0.1)            # the browser's own time to render, in wall time
    raise AssertionError("the page never showed %s: %s" % (what, drv.execute_script(PAGE_JS)))


def words(lang, key, **fields):
    return LANGS[lang].TEXTS[key].format(**fields)


def duration(lang, seconds):
    old = texts.lang()
    texts.set_lang(lang)
    try:
        return texts.duration(seconds)
    finally:
        texts.set_lang(old)


def tiles(drv):
    return {t["id"]: t for t in drv.execute_script(TILES_JS)}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_forty_tables_on_one_screen_those_that_need_the_owner_first(scene, drv, lang):
    with PageServer(scene.dash) as page:
        drv.get(page.url)
        drv.find_element("id", "lang-" + lang).click()
        wait_for(drv, "the page in its language",
                 lambda d: words(lang, "fleet.title") == d.find_element("id", "title").text)
        shown = drv.execute_script(TILES_JS)
        info = drv.execute_script(PAGE_JS)
        assert (info["width"], len(shown)) == (1280, 40)
        assert max(t["bottom"] for t in shown) <= info["height"], info["height"]
        order = [t["id"] for t in shown]
        assert order[:5] == ["t7", "t19", "t33", "t5", "t26"], order
        assert order[5:10] == fleet_scene.IDLE, order
        by_id = tiles(drv)
        for tid, (_, _, ago) in fleet_scene.FAULTED.items():
            assert by_id[tid]["how_long"] == words(lang, "fleet.stopped_for", d=duration(lang, ago))
        for tid, (_, ago) in fleet_scene.OFFLINE.items():
            assert by_id[tid]["how_long"] == words(lang, "fleet.offline_for", d=duration(lang, ago))
        if lang == "zh":
            # Table ids are the tables' own names; every other word is Chinese
            # (the language switch says "English" in English, on purpose).
            left = re.sub(r"\bt\d+\b", "", info["visible"])
            assert not re.search("[A-Za-z]", left), re.findall(r"[A-Za-z_]+", left)
        ARTIFACTS.mkdir(exist_ok=True)
        drv.save_screenshot(str(ARTIFACTS / ("owner-view-%s.png" % lang)))
        # How long runs on: a minute later, t7 has stood a minute more.
        scene.until(scene.clock.mono - 1000.0 + 60)
        want = words(lang, "fleet.stopped_for", d=duration(lang, 13 * 60))
        wait_for(drv, "t7 a minute later", lambda d: tiles(d)["t7"]["how_long"] == want)


def test_a_tables_card_opens_its_detail_in_words(scene, drv):
    with PageServer(scene.dash) as page:
        drv.get(page.url)
        drv.find_element("id", "lang-zh").click()
        # Clicked in the page's own script: the tiles are rendered anew each second.
        drv.execute_script('document.getElementById("table-hall-t19").click()')
        wait_for(drv, "t19's card", lambda d: d.find_element("id", "detail").is_displayed())
        text = drv.find_element("id", "detail-body").text
        assert words("zh", "fleet.detail.ms", v=200) in text and \
            words("zh", "fleet.detail.side", v=2) in text
        assert LANGS["zh"].FAULTS[30][2] in text                  # its fix
        assert words("zh", "fleet.cycles") in text and str(scene.counters["t19"]["cycles"]) in text
        drv.save_screenshot(str(ARTIFACTS / "owner-view-card-zh.png"))
        drv.find_element("id", "detail-close").click()
        wait_for(drv, "the card closed", lambda d: not d.find_element("id", "detail").is_displayed())


DAYS_JS = """
const cells = r => [...r.querySelectorAll("td")].map(c => c.textContent);
const day = document.querySelector("tr.day-row");
return {day: day ? cells(day) : [], tables: Object.fromEntries(
    [...document.querySelectorAll("tr.day-table")].map(r => [r.dataset.table, cells(r)]))};
"""
CSV_JS = """
const done = arguments[arguments.length - 1];
const a = document.querySelector("a.csv");
fetch(a.href).then(r => r.text()).then(done);
"""


def test_the_days_figures_on_the_page_and_in_its_csv_are_the_counters(scene, drv):
    with PageServer(scene.dash) as page:
        drv.get(page.url)
        drv.find_element("id", "lang-en").click()
        wait_for(drv, "the day's figures", lambda d: d.execute_script(DAYS_JS)["tables"])
        shown = drv.execute_script(DAYS_JS)     # one read: the page renders every second
        assert {tid: int(cells[1]) for tid, cells in shown["tables"].items()} == \
            {tid: e["hands"] for tid, e in scene.expected.items()}
        assert shown["day"][:2] == [fleet_scene.DAY,
                                    str(sum(e["hands"] for e in scene.expected.values()))]
        text = drv.execute_async_script(CSV_JS).lstrip("\ufeff")
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == words("en", "fleet.csv_header").split(",")
    got = {line[2]: (int(line[3]), int(line[5])) for line in lines[1:]}
    assert got == {tid: (e["hands"], e["faults"]) for tid, e in scene.expected.items()}


def test_every_load_renders_the_tables(scene, drv):
    with PageServer(scene.dash) as page:
        counts = []
        for _ in range(LOADS):
            drv.get(page.url)
            counts.append(len(drv.execute_script(TILES_JS)))
    assert counts == [40] * LOADS


class Gate:
    """The scene's dashboard whose event stream waits until `open` is set:
    the page between its load and its first state."""

    def __init__(self, dash):
        self.dash = dash
        self.open = threading.Event()

    def __getattr__(self, name):
        return getattr(self.dash, name)

    def wait(self, version, timeout):
        self.open.wait(timeout)
        return self.dash.wait(version, timeout) if self.open.is_set() else version


def test_the_page_says_what_it_is_doing_and_reconnects(scene, drv):
    gate = Gate(scene.dash)
    en = LANGS["en"].TEXTS
    with PageServer(gate) as page:
        drv.get(page.url)
        drv.find_element("id", "lang-en").click()
        info = drv.execute_script(PAGE_JS)
        assert info["status"] == en["fleet.connecting"] and len(tiles(drv)) == 40
        gate.open.set()
        wait_for(drv, "the first state", lambda d: d.execute_script(PAGE_JS)["status"]
                 == en["fleet.broker_up"])
        lost_at = scene.clock.wall()
        with scene.dash.lock:
            scene.dash.model.broker, scene.dash.model.broker_since = False, lost_at
        scene.health("t1")                    # a push
        lost = en["fleet.broker_lost"].split("{")[0]
        wait_for(drv, "the broker lost", lambda d: d.execute_script(PAGE_JS)["status"]
                 .startswith(lost))
        with scene.dash.lock:
            scene.dash.model.broker = True
        port = int(page.url.rsplit(":", 1)[1].strip("/"))
    page_lost = en["fleet.page_lost"].split("{")[0]
    wait_for(drv, "the page server lost", lambda d: d.execute_script(PAGE_JS)["status"]
             .startswith(page_lost) and d.execute_script(PAGE_JS)["stale"] == "stale")
    with PageServer(scene.dash, port=port):
        wait_for(drv, "the stream again", lambda d: d.execute_script(PAGE_JS)["status"]
                 == en["fleet.broker_up"] and d.execute_script(PAGE_JS)["stale"] == "")
