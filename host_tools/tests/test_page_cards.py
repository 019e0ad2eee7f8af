"""The parlour page renders each table's card on its own (host_tools/fleet/
page.html): a view the page cannot render shows as such in its card, the
other cards still show and update, hostile texts stay text, and the
malformed messages are counted in both languages. In Debian's headless
Chromium (host_tools/fleet/browser.py, as hw_tests/test_parlour_page.py):
first with a view set by the test (what a model that let a bad field
through would give), then through the real broker and model with
malformed and hostile payloads of every kind."""

import copy
import json
import threading
import time

import paho.mqtt.client as mqtt
import pytest

from host_tools.fleet import browser
from host_tools.fleet.broker import Broker, table_user
from host_tools.fleet.page import Dashboard, PageServer
from host_tools.texts import en, zh

EVIL = '<img src=x onerror="window.pwned=1">'
EVIL_SCRIPT = "<script>window.pwned=2</script>"
WAIT_S = 20.0              # the browser's and the broker's own time, at most

CARDS_JS = """
return [...document.querySelectorAll("section.table")].map(c => ({
    id: c.id, broken: c.dataset.broken || "", state: (c.querySelector(".state") || {}).textContent,
    malformed: (c.querySelector(".malformed") || {}).textContent, text: c.textContent}));
"""
SAFE_JS = """
return {pwned: window.pwned === undefined ? null : window.pwned,
        injected: document.querySelectorAll("main img, main script, #summary *, #malformed *").length,
        malformed: document.getElementById("malformed").textContent};
"""


@pytest.fixture
def drv(tmp_path):
    browser.install()
    with browser.chromium(str(tmp_path / "profile")) as d:
        yield d


def cards(drv):
    return {c["id"]: c for c in drv.execute_script(CARDS_JS)}


def wait_for(drv, what, pred):
    """Polls the page (it renders each push) until pred(drv)."""
    end = time.monotonic() + WAIT_S
    while time.monotonic() < end:
        if pred(drv):
            return
        time.sleep(0.1)            # the browser's own time to render, in wall time
    raise AssertionError("the page never showed %s: %s" % (what, drv.execute_script(CARDS_JS)))


def lang(drv, code):
    drv.find_element("id", "lang-" + code).click()


# -- a view set by the test ------------------------------------------------------------------

class View:
    """The Dashboard's part the page uses (snapshot, wait, days), of a view
    the test sets."""

    def __init__(self, snap):
        self.snap = snap
        self.version = 0
        self.changed = threading.Condition()

    def set(self, snap):
        with self.changed:
            self.snap = snap
            self.version += 1
            self.changed.notify_all()

    def snapshot(self):
        with self.changed:
            return copy.deepcopy(self.snap)

    def wait(self, version, timeout):
        with self.changed:
            if self.version == version:
                self.changed.wait(timeout)
            return self.version

    def days(self):
        return []


def table(tid, **fields):
    tb = {"site": "hall", "id": tid, "online": True, "offline": None, "silent_s": 0.5,
          "stale_after_s": 8.0, "pace": 1.0, "state": "idle", "fault": None, "dealer": 1,
          "hands": 3, "hands_today": 3, "in_use_s": 60, "last_hand": None,
          "counters": {"cycles": 4, "hands": 3, "lifts": 4, "tiles_fed": [34, 34, 34, 34],
                       "faults": [[10, 1]]},
          "health": {"uptime": 60000, "heap_free": 9000, "boots": 1,
                     "link": {"errors": 0, "dropped": 0, "overruns": 0},
                     "mqtt": {"dropped": 0, "errors": 0, "refused": 0, "connects": 1, "sent": 9,
                              "skipped": 0}},
          "build": {"fw": "0.1.0", "build": "image-1"}, "messages": 9, "bad": 0, "dropped": 0,
          "faults_seen": {}}
    tb.update(fields)
    return tb


def view(t1_state="idle"):
    evil_fault = {"code": 10, "name": EVIL, "detail": {EVIL: EVIL_SCRIPT}, "t": 1, "since": 1.8e9}
    return {"now": 1.8e9, "started": 1.8e9, "broker": True, "bridges": {}, "messages": 40,
            "bad": 1, "dropped": 2, "stale_s": 8.0, "history": [
                {"site": "hall", "table": "t3", "code": 10, "name": EVIL, "detail": {EVIL: 1},
                 "t": 1, "at": 1.8e9, "cleared_at": None},
                {"site": "hall", "table": "t2", "code": 10, "name": None, "detail": 7,
                 "t": None, "at": None, "cleared_at": None}],
            "tables": [
                table("t1", state=t1_state),
                table("t2", counters={"cycles": 1, "faults": 5}),           # .map of a number
                table("t3", state=EVIL, fault=evil_fault, build={"fw": EVIL, "build": EVIL_SCRIPT}),
                table("t4", counters={"faults": [None]}, health="x"),      # p[0] of null
            ]}


def test_a_card_the_page_cannot_render_leaves_the_others_showing_and_updating(drv):
    v = View(view())
    with PageServer(v) as page:
        drv.get(page.url)
        lang(drv, "en")
        wait_for(drv, "four cards", lambda d: len(cards(d)) == 4)
        c = cards(drv)
        assert c["table-hall-t1"]["state"] == "idle" and not c["table-hall-t1"]["broken"]
        assert c["table-hall-t3"]["state"] == EVIL and EVIL_SCRIPT in c["table-hall-t3"]["text"]
        for tid in ("t2", "t4"):
            card = c["table-hall-" + tid]
            assert card["broken"] == "1" and en.TEXTS["fleet.cannot_show"] in card["text"], card
        safe = drv.execute_script(SAFE_JS)
        assert safe["pwned"] is None and safe["injected"] == 0, safe
        assert safe["malformed"] == en.TEXTS["fleet.malformed"].format(bad=1, dropped=2)
        # The next push changes t1 alone: its card follows, t2 still cannot show.
        v.set(view(t1_state="building"))
        wait_for(drv, "t1 building",
                 lambda d: cards(d)["table-hall-t1"]["state"] == en.TEXTS["fleet.state.building"])
        assert cards(drv)["table-hall-t2"]["broken"] == "1"
        lang(drv, "zh")
        wait_for(drv, "t1 in Chinese",
                 lambda d: cards(d)["table-hall-t1"]["state"] == zh.TEXTS["state.building"])
        assert zh.TEXTS["fleet.cannot_show"] in cards(drv)["table-hall-t2"]["text"]
        assert drv.execute_script(SAFE_JS)["malformed"] == \
            zh.TEXTS["fleet.malformed"].format(bad=1, dropped=2)
        rows = drv.execute_script('return document.querySelectorAll("tr.hist-row").length')
        assert rows == 2


# -- through the broker and the model ------------------------------------------------------------

PASSWORDS = {"t1": "pw-one", "t2": "pw-two", "t3": "pw-three"}
GOOD = [("online", b"true"), ("state", {"state": "idle", "fault": None, "t": 1000}),
        ("counters", {"cycles": 4, "hands": 3, "lifts": 4, "tiles_fed": [34, 34, 34, 34],
                      "faults": [[10, 1]]})]
# A field of the wrong kind in every kind of message (ten in all), and a
# message that is not JSON.
MALFORMED = [("online", b"true"), ("state", {"state": "lifting", "fault": "ten", "t": 1000}),
             ("fault", {"code": 10, "name": "lane_jam", "detail": 5, "t": 1000}),
             ("cleared", {"code": [], "t": 1000}),
             ("hand", {"winner": 1, "draw": False, "dealer": "east", "hands": 3, "t": 1000}),
             ("counters", {"cycles": 4, "hands": 3, "lifts": 4, "tiles_fed": "full", "faults": 5}),
             ("health", {"uptime": 1000, "heap_free": "lots", "link": [], "mqtt": {"sent": -1}}),
             ("build", {"fw": 7, "build": "image-1"}), ("state", b"{not json")]
HOSTILE = [("online", b"true"), ("state", {"state": EVIL, "fault": 10, "t": 1000}),
           ("fault", {"code": 10, "name": EVIL_SCRIPT, "detail": {EVIL: EVIL_SCRIPT}, "t": 1000}),
           ("build", {"fw": EVIL, "build": EVIL_SCRIPT})]


def publish(port, tid, messages):
    """`messages` published as table `tid`, each acknowledged (QoS 1);
    `online` retained, as the firmware sends it."""
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    c.username_pw_set(table_user("hall", tid), PASSWORDS[tid])
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        for leaf, data in messages:
            payload = data if isinstance(data, bytes) else json.dumps(data).encode()
            c.publish("parlour/hall/table/%s/%s" % (tid, leaf), payload, qos=1,
                      retain=leaf == "online").wait_for_publish(WAIT_S)
    finally:
        c.disconnect()
        c.loop_stop()


def test_malformed_and_hostile_payloads_of_every_kind_leave_every_card_showing(drv):
    with Broker(tables=[("hall", tid, pw) for tid, pw in PASSWORDS.items()]) as b, \
            Dashboard(b.port, b.dashboard, expect=[("hall", t) for t in PASSWORDS]) as dash, \
            PageServer(dash) as page:
        drv.get(page.url)
        lang(drv, "en")
        # A retained message seen by the dashboard: it has subscribed, and
        # gets every message published from here on.
        publish(b.port, "t1", GOOD[:1])
        end = time.monotonic() + WAIT_S
        while not dash.snapshot()["tables"][0]["online"]:
            assert time.monotonic() < end, "the dashboard never subscribed"
            time.sleep(0.05)       # the broker's delivery, in wall time
        publish(b.port, "t2", MALFORMED)
        publish(b.port, "t3", HOSTILE)
        publish(b.port, "t1", GOOD)
        wait_for(drv, "t1 idle", lambda d: cards(d).get("table-hall-t1", {}).get("state") == "idle")
        c = cards(drv)
        assert not any(card["broken"] for card in c.values()), c
        assert c["table-hall-t2"]["state"] == en.TEXTS["fleet.state.lifting"]
        assert c["table-hall-t3"]["state"] == EVIL and EVIL_SCRIPT in c["table-hall-t3"]["text"]
        snap = dash.snapshot()
        assert (snap["bad"], snap["dropped"]) == (1, 10), snap
        expect = en.TEXTS["fleet.malformed"].format(bad=1, dropped=10)
        assert c["table-hall-t2"]["malformed"] == expect
        safe = drv.execute_script(SAFE_JS)
        assert safe["pwned"] is None and safe["injected"] == 0 and safe["malformed"] == expect
        lang(drv, "zh")
        wait_for(drv, "the count in Chinese", lambda d: d.execute_script(SAFE_JS)["malformed"]
                 == zh.TEXTS["fleet.malformed"].format(bad=1, dropped=10))
