"""The project's broker binds a connection to its user (host_tools/fleet/
broker.py, docs/fleet.md, Who may read what): a table's client id taken
by the dashboard's user or by another table's does not disconnect it nor
publish its last-will; each screen has its own user and keeps its
connection. Real Mosquitto on 127.0.0.1; the table is a client that
connects as the firmware does (firmware/link/telemetry.py: its client id,
its user, its retained last-will)."""

import threading

import paho.mqtt.client as mqtt
import pytest

from host_tools.fleet.broker import Broker, table_user
from host_tools.fleet.listen import Listener

SITE = "hall"
ROOT = "parlour/%s/table/" % SITE
FIRMWARE_ID = "parlour-%s-table-t1" % SITE       # the id the table's firmware sends
WAIT_S = 10.0              # the broker's answers on 127.0.0.1, at most


class Client:
    """One MQTT connection as `user` with `client_id` (and the table's
    last-will when `will`); counts its disconnects."""

    def __init__(self, port, user, client_id, will=None):
        self.connected = threading.Event()
        self.dropped = threading.Event()
        self.disconnects = 0
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        self.c.username_pw_set(*user)
        if will:
            self.c.will_set(will, b"false", qos=0, retain=True)
        self.c.on_connect = lambda c, u, f, reason, p: (
            None if reason.is_failure else self.connected.set())
        self.c.on_disconnect = self._on_disconnect
        self.c.connect("127.0.0.1", port)
        self.c.loop_start()
        assert self.connected.wait(WAIT_S), "the broker did not accept %s" % user[0]

    def _on_disconnect(self, *args):
        self.disconnects += 1
        self.dropped.set()

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


@pytest.fixture
def broker():
    with Broker(tables=[(SITE, "t1", "pw-one"), (SITE, "t2", "pw-two")],
                screens=["office"]) as b:
        yield b


def test_a_tables_client_id_taken_by_other_users_leaves_it_online_with_no_last_will(broker):
    with Listener(broker.port, broker.screens["office"]) as watch:
        table = Client(broker.port, (table_user(SITE, "t1"), "pw-one"), FIRMWARE_ID,
                       will=ROOT + "t1/online")
        clients = [table]
        try:
            table.c.publish(ROOT + "t1/online", b"true", qos=1, retain=True).wait_for_publish(WAIT_S)
            watch.wait(lambda m: m.topic == ROOT + "t1/online" and m.payload == b"true",
                       WAIT_S, "t1 online")
            # The dashboard's user (every parlour screen holds it) and
            # table t2's, each with the id the table sends and with the
            # user's name the broker gives it.
            for user in (broker.dashboard, (table_user(SITE, "t2"), "pw-two")):
                for cid in (FIRMWARE_ID, table_user(SITE, "t1")):
                    clients.append(Client(broker.port, user, cid))
            # Each intruder was accepted (its CONNACK came) before the
            # table publishes again: a last-will the broker had published
            # for it would reach the watcher before this message.
            info = table.c.publish(ROOT + "t1/state", b'{"state": "idle"}', qos=1)
            info.wait_for_publish(WAIT_S)
            watch.wait(lambda m: m.topic == ROOT + "t1/state", WAIT_S, "t1's state")
            assert not [m for m in watch.seen if m.payload == b"false"], watch.seen
            assert table.disconnects == 0
            log = broker.log()
            for cid in (FIRMWARE_ID, table_user(SITE, "t1")):
                assert "Client %s already connected" % cid not in log, log
        finally:
            for c in clients:
                c.close()


def test_each_screen_keeps_its_own_connection_and_a_shared_user_holds_one():
    """The page's user and another screen's are connected together; a
    second connection with the page's user takes the first's place (what
    two screens sharing a user do to each other, in turns)."""
    with Broker(tables=[(SITE, "t1", "pw-one")], screens=["office", "mjctl"]) as b:
        assert b.screens["office"][0] == "dashboard-office"
        page = Client(b.port, b.dashboard, "page")
        office = Client(b.port, b.screens["office"], "office")
        mjctl = Client(b.port, b.screens["mjctl"], "mjctl")
        twin = None
        try:
            table = Client(b.port, (table_user(SITE, "t1"), "pw-one"), FIRMWARE_ID)
            table.c.publish(ROOT + "t1/online", b"true", qos=1).wait_for_publish(WAIT_S)
            table.close()
            assert page.disconnects == office.disconnects == mjctl.disconnects == 0
            twin = Client(b.port, b.dashboard, "page-on-another-pc")
            assert "Client dashboard already connected, closing old connection" in b.log()
            assert page.dropped.wait(WAIT_S)
            assert office.disconnects == mjctl.disconnects == 0
        finally:
            for c in (page, office, mjctl, twin):
                if c is not None:
                    c.close()
