"""A subscriber to the tables' telemetry for the tests (the dashboard's
is host_tools/fleet/page.py): every message under a topic filter, kept
in order, decoded.

    with Listener(broker.port, broker.dashboard) as ln:
        msg = ln.wait(lambda m: m.leaf == "state", timeout=10)
"""

import json
import queue
import threading
import time

import paho.mqtt.client as mqtt


class Message:
    def __init__(self, topic, payload, retain):
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.leaf = topic.rsplit("/", 1)[-1]
        try:
            self.data = json.loads(payload)
        except ValueError:
            self.data = None

    def __repr__(self):
        return "<%s%s %r>" % (self.topic, " (retained)" if self.retain else "", self.payload)


class Listener:
    """Connects as `user` = (name, password), subscribes to `topic`."""

    def __init__(self, port, user, topic="parlour/#"):
        self.port = port
        self.user = user
        self.topic = topic
        self.q = queue.Queue()
        self.seen = []
        self.connected = threading.Event()
        self.refused = None
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        self.c.username_pw_set(*user)
        self.c.on_connect = self._on_connect
        self.c.on_message = self._on_message

    def _on_connect(self, client, userdata, flags, reason, properties):
        if reason.is_failure:
            self.refused = reason
            return
        client.subscribe(self.topic)
        self.connected.set()

    def _on_message(self, client, userdata, msg):
        m = Message(msg.topic, msg.payload, bool(msg.retain))
        self.seen.append(m)
        self.q.put(m)

    def __enter__(self):
        self.c.connect("127.0.0.1", self.port)
        self.c.loop_start()
        if not self.connected.wait(10):
            self.close()
            raise AssertionError("the broker did not accept %s: %s" % (self.user[0], self.refused))
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.c.loop_stop()
        self.c.disconnect()

    def wait(self, pred, timeout=30.0, what="a message"):
        """The next message that satisfies `pred`; AssertionError after
        `timeout` seconds of wall time, naming what was seen."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError("no %s in %.0f s; seen: %s" % (what, timeout, self.seen[-12:]))
            try:
                m = self.q.get(timeout=left)
            except queue.Empty:
                continue
            if pred(m):
                return m
