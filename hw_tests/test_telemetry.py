"""The table's telemetry against a real broker (docs/fleet.md): the twin
publishes to Mosquitto on 127.0.0.1 (host_tools/fleet/broker.py, started
here), and a subscriber reads what a parlour's dashboard would. The table
plays on whatever the broker does: killed and started again, a wrong
password, topics the ACL refuses. Every message of a whole hand is
decoded and searched for a hidden tile's code or a tag's UID."""

import json
import re
import time

import pytest

from host_tools.cli.ops import run_cycle, run_hand
from host_tools.fleet.broker import Broker, table_user
from host_tools.fleet.listen import Listener
from host_tools.link.client import LinkClient, LinkError
from host_tools.sim.hand_players import HandPlayers
from host_tools.sim.launcher import SimTable
from hw_tests.harness import HEAP_BUDGET

pytestmark = pytest.mark.needs_sim

SITE = "hall"
TILE_CODE = re.compile(r"\b([1-9][mpsz]|[1-8]f)\b")
UID = re.compile(r"4d4a[0-9a-f]{4}", re.I)
ROOT = "parlour/%s/table/" % SITE


@pytest.fixture
def broker():
    """Mosquitto with three tables' users (t1, t2, t3), the dashboard and
    another screen's user ("office")."""
    with Broker(tables=[(SITE, "t1", "pw-one"), (SITE, "t2", "pw-two"),
                        (SITE, "t3", "pw-three")], screens=["office"]) as b:
        yield b


class Table:
    """The twin with its telemetry configured (the secret mqtt.json in its
    store, as config_set mqtt.* writes it), and its link."""

    def __init__(self, broker, table="t1", password=None, seed=1, faults=(), players=False,
                 user=None, heap=None):
        self.sim = SimTable(seed=seed, faults=faults, heap=heap)
        conf = {"host": "127.0.0.1", "port": broker.port, "site": SITE, "table": table,
                "user": user or table_user(SITE, table),
                "password": password or {"t1": "pw-one", "t2": "pw-two",
                                         "t3": "pw-three"}[table]}
        with open(self.sim.store + "/mqtt.json", "w") as f:
            json.dump(conf, f)
        self.players = HandPlayers(self.sim.table, seed=seed) if players else None
        self.sim.start()
        self.link = LinkClient(self.sim.link_path)

    def close(self):
        self.link.close()
        self.sim.stop()

    def wait_virtual(self, ms, timeout=60):
        """Until the table's clock has moved `ms` on (virtual time)."""
        t0 = self.link.request("status")["uptime"]
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.link.request("status")
            if st["uptime"] - t0 >= ms:
                return st
        raise AssertionError("the table's clock did not move %d ms in %d s" % (ms, timeout))


@pytest.fixture
def tables(broker):
    made = []

    def make(**kwargs):
        t = Table(broker, **kwargs)
        made.append(t)
        return t
    yield make
    for t in made:
        t.close()


def _at(msg, table, leaf):
    return msg.topic == ROOT + table + "/" + leaf


def test_the_table_publishes_online_build_state_counters_and_health(broker, tables):
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables(heap=HEAP_BUDGET)
        online = ln.wait(lambda m: _at(m, "t1", "online"), what="online")
        assert online.payload == b"true"
        build = ln.wait(lambda m: _at(m, "t1", "build"), what="build")
        assert build.data["fw"] == "0.1.0"
        assert build.data["build"].startswith("image-")
        state = ln.wait(lambda m: _at(m, "t1", "state"), what="state")
        assert state.data["state"] in ("boot", "idle")
        t.link.request("start")
        ln.wait(lambda m: _at(m, "t1", "state") and m.data["state"] == "building",
                what="the state building")
        counters = ln.wait(lambda m: _at(m, "t1", "counters"), what="counters")
        assert set(counters.data) == {"cycles", "hands", "lifts", "tiles_fed", "faults"}
        health = ln.wait(lambda m: _at(m, "t1", "health"), what="health")
        assert health.data["boots"] == 1
        assert 0 < health.data["heap_free"] < HEAP_BUDGET
        assert health.data["mqtt"]["connects"] == 1
        assert set(health.data["link"]) == {"errors", "dropped", "overruns"}


def test_a_fault_is_published_with_its_code_cause_and_fix_and_the_state_says_it(broker, tables):
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables(faults=["lane_jam:2"])
        t.link.request("start")
        f = ln.wait(lambda m: _at(m, "t1", "fault"), what="the fault")
        assert f.data["code"] == 10 and f.data["name"] == "lane_jam"
        assert f.data["cause"].startswith("A lane stopped counting tiles")
        assert f.data["fix"].startswith("Open the lane cover")
        assert f.data["detail"]["lane"] == 2
        # the state "fault" just before it, with the code
        states = [m.data for m in ln.seen if _at(m, "t1", "state")]
        assert states[-1]["state"] == "fault" and states[-1]["fault"] == 10, states


def test_a_late_subscriber_finds_the_retained_state_online_and_build(broker, tables):
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables()
        t.link.request("start")
        ln.wait(lambda m: _at(m, "t1", "state") and m.data["state"] == "building",
                what="the state building")
    with Listener(broker.port, broker.dashboard) as late:
        got = {}
        for leaf in ("online", "build", "state"):
            m = late.wait(lambda m: _at(m, "t1", leaf), what=leaf, timeout=10)
            assert m.retain, m
            got[leaf] = m
        assert got["online"].payload == b"true"
        assert got["state"].data["state"] != "boot"


def test_the_last_will_marks_a_killed_table_offline_and_it_comes_back(broker, tables):
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables()
        ln.wait(lambda m: _at(m, "t1", "online") and m.payload == b"true", what="online")
        t.sim.power_cut_now()      # the firmware's process killed: its socket closes
        off = ln.wait(lambda m: _at(m, "t1", "online") and m.payload == b"false",
                      what="the last-will")
        assert off.topic == ROOT + "t1/online"
        ln.wait(lambda m: _at(m, "t1", "online") and m.payload == b"true", what="online again")
        h = ln.wait(lambda m: _at(m, "t1", "health"), what="health")
        assert h.data["boots"] == 2


def test_the_table_plays_on_while_the_broker_is_down_and_reconnects(broker, tables):
    t = tables()
    with Listener(broker.port, broker.dashboard) as ln:
        ln.wait(lambda m: _at(m, "t1", "health"), what="health")
    broker.kill()
    # A whole cycle with no broker: the walls go up, the dice are shown.
    out = run_cycle(t.sim, t.link)
    assert out["ok"], out
    # With the cycle's time, long enough that health, counters and the
    # cycle's states fill the queue (12) and push some out.
    t.wait_virtual(40000, timeout=90)
    broker.start()
    with Listener(broker.port, broker.dashboard) as ln:
        h = ln.wait(lambda m: _at(m, "t1", "health") and m.data["mqtt"]["connects"] >= 2,
                    what="health after the reconnect", timeout=60)
        mq = h.data["mqtt"]
        assert mq["errors"] >= 1 and mq["dropped"] > 0, mq
        st = t.link.request("status")
        assert st["fault"] is None and st["state"] not in ("boot",)
    assert "Traceback" not in t.sim.firmware_log()


def test_a_wrong_password_is_refused_and_the_table_plays_on(broker, tables):
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables(password="wrong")
        out = run_cycle(t.sim, t.link)
        assert out["ok"], out
        t.wait_virtual(40000)
        assert not [m for m in ln.seen if m.topic.startswith(ROOT + "t1/")], ln.seen
    log = broker.log()
    refusals = log.count("not authorised")
    # Backed off: 1, 2, 4, 8, 16 s... about six tries in the minute or so
    # the table ran, never one per tick.
    assert 1 <= refusals <= 12, log[-2000:]
    assert "Traceback" not in t.sim.firmware_log()


def test_the_acl_keeps_a_table_to_its_own_topics(broker, tables):
    """Table t1's user configured as table t2: everything it publishes
    (and its last-will) names t2's topics, which t1's user may not write;
    and the dashboard's user may read, never write."""
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables(table="t2", user=table_user(SITE, "t1"), password="pw-one")
        t.link.request("start")
        t.wait_virtual(30000)
        assert not [m for m in ln.seen if m.topic.startswith(ROOT + "t2/")], ln.seen
        # The dashboard cannot write either. With QoS 1 the broker answers
        # once it has routed the message: had it been let through, this
        # subscriber (parlour/#) would have had it before the answer.
        info = ln.c.publish(ROOT + "t3/state", b'{"state": "idle"}', qos=1, retain=True)
        info.wait_for_publish(10)
        assert info.is_published()
        assert not [m for m in ln.seen if m.topic.startswith(ROOT + "t3/")], ln.seen


def test_no_other_user_can_take_a_tables_connection(broker, tables):
    """The dashboard's user and table t2's each connect with the client id
    t1's firmware sends: t1 keeps its connection (a health formatted well
    after counts one connect and no error; a lost one would be retried
    within 1 s), and no last-will of it is published."""
    import threading

    import paho.mqtt.client as mqtt
    with Listener(broker.port, broker.screens["office"]) as ln:
        t = tables()
        ln.wait(lambda m: _at(m, "t1", "health"), what="the first health")
        intruders = []
        try:
            for user in (broker.dashboard, (table_user(SITE, "t2"), "pw-two")):
                accepted = threading.Event()
                c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="parlour-hall-table-t1")
                c.username_pw_set(*user)
                c.on_connect = lambda *a, ev=accepted: ev.set()
                c.connect("127.0.0.1", broker.port)
                c.loop_start()
                intruders.append(c)
                assert accepted.wait(10), user[0]
            since = t.link.request("status")["uptime"]
            h = ln.wait(lambda m: _at(m, "t1", "health") and m.data["uptime"] > since + 6000,
                        what="a health 6 s after the intruders")
        finally:
            for c in intruders:
                c.disconnect()
                c.loop_stop()
    assert h.data["mqtt"]["connects"] == 1 and h.data["mqtt"]["errors"] == 0, h.data
    assert not [m for m in ln.seen if _at(m, "t1", "online") and m.payload == b"false"]


def _walk(obj, path, found):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("tile", "tiles", "uid", "wall", "walls", "hand"):
                found.append((path + "." + k, v))
            _walk(v, path + "." + k, found)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _walk(v, "%s[%d]" % (path, i), found)
    elif isinstance(obj, str):
        if TILE_CODE.search(obj) or UID.search(obj):
            found.append((path, obj))


def test_no_message_of_a_whole_hand_names_a_tile_or_a_tag(broker, tables):
    """Every message from the boot to a hand's result, decoded: JSON, and
    no secret key, tile code or tag UID at any depth. The hand's result
    is published with its winner or draw, dealer and streak."""
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables(seed=0, players=True, heap=HEAP_BUDGET)     # a hand fits with telemetry on
        out = run_hand(t.sim, t.link, t.players)
        assert out["ok"], {k: out[k] for k in out if k not in ("scenario", "observed")}
        hand = ln.wait(lambda m: _at(m, "t1", "hand"), what="the hand's result")
        res = out["result"]
        assert hand.data["winner"] == res["winner"] and hand.data["draw"] == res["draw"]
        assert hand.data["dealer"] == res["dealer"] and hand.data["streak"] == res["streak"]
        assert hand.data["hands"] == 1
        t.wait_virtual(11000)      # the counters and health after the hand, too
        ln.wait(lambda m: _at(m, "t1", "counters") and m.data["hands"] == 1,
                what="the counters after the hand")
    assert len(ln.seen) > 10
    found = []
    for m in ln.seen:
        if m.leaf == "online":
            assert m.payload in (b"true", b"false")
            continue
        assert m.data is not None, m
        _walk(m.data, m.topic, found)
    assert not found, found


def test_an_audit_fault_is_published_without_the_tiles_it_names(broker, tables):
    """The audit's faults name tiles (of walls not in play) in the link's
    detail; published, they keep their code, cause and fix, and no detail:
    no message names a tile."""
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables(faults=["missing_tile:5m"])
        t.link.request("start")
        f = ln.wait(lambda m: _at(m, "t1", "fault"), what="the audit's fault")
        assert f.data["code"] == 20 and f.data["name"] == "missing_tile"
        assert f.data["cause"] and f.data["fix"] and "detail" not in f.data
        ev = t.link.wait_event(lambda e: e["ev"] == "fault", 30)
        assert ev["detail"]["tiles"] == ["5m"]     # the link's has it: the filter is the telemetry's
        t.wait_virtual(11000)      # the counters and health after it, too
    found = []
    for m in ln.seen:
        if m.leaf != "online":
            _walk(m.data, m.topic, found)
    assert not found, found


def test_the_telemetry_steps_aside_for_a_visit_and_comes_back_10_s_after_it(broker, tables):
    """A service session: the telemetry ends its connection without its
    last-will (the table is not offline) and publishes nothing while the
    session is open; it is back 10 s after the session ends, with its
    counters (a second connect)."""
    with Listener(broker.port, broker.dashboard) as ln:
        t = tables()
        ln.wait(lambda m: _at(m, "t1", "health"), what="the first health")
        session = t.link.open_service(t.sim.key)
        opened = t.link.request("status")["uptime"]
        t.wait_virtual(15000)          # a health would be due in that time
        closed = t.link.request("status")["uptime"]
        t.link.close_service(session)
        t.wait_virtual(13000)
        back = ln.wait(lambda m: _at(m, "t1", "health") and m.data["mqtt"]["connects"] == 2,
                       what="the health after the visit")
    during = [m for m in ln.seen if m.leaf in ("health", "state") and m.data
              and opened < m.data.get("uptime", m.data.get("t", 0)) < closed]
    assert not during, during
    assert back.data["uptime"] >= closed + 10000
    assert not [m for m in ln.seen if _at(m, "t1", "online") and m.payload == b"false"]


def test_the_technician_sets_the_telemetry_in_service_and_it_starts_at_the_next_boot(broker):
    """config_set mqtt.* in a service session writes the secret mqtt.json
    (never the config file); the password is neither answered nor logged;
    after a restart the table publishes."""
    sim = SimTable(seed=2)
    sim.start()
    try:
        with LinkClient(sim.link_path) as link, Listener(broker.port, broker.dashboard) as ln:
            session = link.open_service(sim.key)
            for key, value in (("mqtt.host", "127.0.0.1"), ("mqtt.port", broker.port),
                               ("mqtt.site", SITE), ("mqtt.table", "t3"),
                               ("mqtt.user", table_user(SITE, "t3")), ("mqtt.password", "pw-three")):
                out = link.request("config_set", session=session, key=key, value=value)
                assert out["restart"] and out["value"] == ("***" if key == "mqtt.password" else value)
            with pytest.raises(LinkError) as e:
                link.request("config_set", session=session, key="mqtt.host", value="broker.lan")
            assert e.value.code == "config_invalid"
            link.close_service(session)
            first = link.request("service_log")
            log = [e for start in range(0, first["total"], 4)
                   for e in link.request("service_log", start=start)["entries"]]
            said = [e for e in log if e[1] == "config_set" and e[2] == "mqtt.password"]
            assert said and said[0][3] == "***", log
            assert "pw-three" not in json.dumps(log)
            with open(sim.store + "/mqtt.json") as f:
                assert json.load(f)["table"] == "t3"
            with open(sim.store + "/config.json") as f:
                assert "mqtt" not in f.read()
            assert not ln.seen                     # nothing until the next boot
            sim.power_cut_now()
            ln.wait(lambda m: _at(m, "t3", "online") and m.payload == b"true", what="online")
    finally:
        sim.stop()


class Hostile:
    """A "broker" on 127.0.0.1 that misbehaves: `silent` accepts and never
    answers; `garbage` answers the CONNECT with a CONNACK, then floods the
    table with random bytes. Counts the connections and what it got."""

    def __init__(self, mode):
        import os
        import socket
        import threading
        self.mode = mode
        self.connects = 0
        self.received = 0
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(8)
        self.port = self.srv.getsockname()[1]
        self.conns = []
        self._noise = os.urandom(4096)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import threading
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            self.connects += 1
            self.conns.append(c)
            threading.Thread(target=self._talk, args=(c,), daemon=True).start()

    def _talk(self, c):
        try:
            self.received += len(c.recv(1024))
            if self.mode == "garbage":
                c.sendall(b"\x20\x02\x00\x00")
                c.settimeout(0.01)
                for _ in range(64):
                    c.sendall(self._noise)
                    try:
                        self.received += len(c.recv(65536))
                    except OSError:
                        pass
            while True:            # keep reading what the table sends
                c.settimeout(None)
                data = c.recv(65536)
                if not data:
                    return
                self.received += len(data)
        except OSError:
            return

    def close(self):
        self.srv.close()
        for c in self.conns:
            c.close()


@pytest.mark.parametrize("mode", ["silent", "garbage"])
def test_a_hostile_broker_never_stops_the_table(mode):
    """A broker that never answers: the table plays a whole cycle, trying
    again with backoff (a handful of connects, never one per tick). One
    that floods the table with garbage after its CONNACK: the table reads
    and drops it, plays on, and keeps publishing on that connection."""
    bad = Hostile(mode)
    sim = SimTable(seed=1)
    with open(sim.store + "/mqtt.json", "w") as f:
        json.dump({"host": "127.0.0.1", "port": bad.port, "site": SITE, "table": "t1",
                   "user": table_user(SITE, "t1"), "password": "pw-one"}, f)
    sim.start()
    try:
        with LinkClient(sim.link_path) as link:
            out = run_cycle(sim, link)
            assert out["ok"], out
            up = link.request("status")["uptime"]
            assert link.request("status")["fault"] is None
        if mode == "silent":
            # backoff 1, 2, 4 ... 64 s over the cycle's virtual time
            assert 2 <= bad.connects <= 10, (bad.connects, up)
        else:
            assert bad.connects == 1, bad.connects
            assert bad.received > 200          # the CONNECT and publishes after it
        assert "Traceback" not in sim.firmware_log()
    finally:
        sim.stop()
        bad.close()
