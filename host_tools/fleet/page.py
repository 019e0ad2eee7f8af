"""The parlour page: a small web server on this PC that subscribes to the
broker with the dashboard's read-only user and shows every table live
(docs/fleet.md, The page).

    with Dashboard(port, ("dashboard", pw), expect=[("hall", "t1")]) as d:
        with PageServer(d) as page:
            print(page.url)

GET /         the page (page.html: the browser renders what /events sends)
GET /events   Server-Sent Events: the whole view (FleetModel.snapshot) as
              JSON at each change, at most PUSH_HZ a second, and at least
              once a second (a table turning silent shows within a second
              of its timeout)
GET /state    the same view once
GET /texts    the page's words in English and Chinese (host_tools/texts)

Python's own http.server, one thread per client, on 127.0.0.1 unless told.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import paho.mqtt.client as mqtt

from host_tools import texts
from host_tools.fleet.model import FleetModel
from host_tools.texts import faults as fault_table

PUSH_HZ = 5.0             # at most this many pushes a second to each client
BEAT_S = 1.0              # and at least one a second
PAGE = Path(__file__).with_name("page.html")


class Dashboard:
    """The dashboard's subscriber: every message under parlour/# into a
    FleetModel, under a lock; `changed` wakes the page's clients. `on_fault`
    (a function of table id, payload, arrival) sees each fault message as
    it arrives (host_tools/fleet/measure.py times them)."""

    def __init__(self, port, user, expect=(), host="127.0.0.1", stale_s=None, on_fault=None):
        kw = {} if stale_s is None else {"stale_s": stale_s}
        self.model = FleetModel(expect=expect, **kw)
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.version = 0           # bumped at each change
        self.on_fault = on_fault
        self.host, self.port = host, port
        # The project's broker replaces the id with the user's name (one
        # connection per user: docs/fleet.md, Who may read what); on a
        # broker that does not, a distinct id keeps two screens apart.
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="dashboard-%d" % id(self))
        self.c.username_pw_set(*user)
        self.c.reconnect_delay_set(1, 8)
        self.c.on_connect = self._on_connect
        self.c.on_disconnect = self._on_disconnect
        self.c.on_message = self._on_message

    def _on_connect(self, client, userdata, flags, reason, properties):
        with self.lock:
            self.model.broker = not reason.is_failure
            self._bump()
        if not reason.is_failure:
            client.subscribe("parlour/#")

    def _on_disconnect(self, client, userdata, flags, reason, properties):
        with self.lock:
            self.model.broker = False
            self._bump()

    def _on_message(self, client, userdata, msg):
        now = time.monotonic()
        with self.lock:
            try:
                changed = self.model.feed(msg.topic, msg.payload, now)
            except Exception:      # a bug in the model: one message lost, not paho's thread
                self.model.bad += 1
                changed = False
            if changed:
                self._bump()
        if self.on_fault is not None and msg.topic.endswith("/fault"):
            self.on_fault(msg.topic.split("/")[3], msg.payload, now)

    def _bump(self):
        self.version += 1
        self.changed.notify_all()

    def snapshot(self):
        with self.lock:
            return self.model.snapshot()

    def wait(self, version, timeout):
        """Until the view is newer than `version` or `timeout` passes; the
        current version."""
        with self.lock:
            if self.version == version:
                self.changed.wait(timeout)
            return self.version

    def start(self):
        self.c.connect_async(self.host, self.port, keepalive=10)
        self.c.loop_start()
        return self

    def stop(self):
        self.c.disconnect()
        self.c.loop_stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def page_texts():
    """The page's words: fleet.* and state.* in each language, and every
    fault's name, cause and fix by code."""
    out = {}
    for lang in sorted(texts.LANGS):
        table = texts.LANGS[lang].TEXTS
        words = {k: v for k, v in table.items() if k.startswith(("fleet.", "state.", "detail."))}
        old = texts.lang()
        texts.set_lang(lang)
        try:
            fl = {str(code): list(texts.fault_texts(code)) for code in fault_table.codes()}
        finally:
            texts.set_lang(old)
        out[lang] = {"words": words, "faults": fl}
    return out


class _Handler(BaseHTTPRequestHandler):
    server_version = "parlour-page"

    def log_message(self, fmt, *args):      # quiet: the terminal is the fleet's
        pass

    def _send(self, code, ctype, body):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        srv = self.server
        path = self.path.split("?")[0]
        if path == "/":
            self._send(200, "text/html; charset=utf-8", srv.html)
        elif path == "/texts":
            self._send(200, "application/json", srv.texts)
        elif path == "/state":
            self._send(200, "application/json", json.dumps(srv.dashboard.snapshot()).encode())
        elif path == "/events":
            self._events()
        else:
            self._send(404, "text/plain", b"not found\n")

    def _events(self):
        srv = self.server
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        version = -1
        try:
            while not srv.stopping.is_set():
                version = srv.dashboard.wait(version, BEAT_S)
                snap = srv.dashboard.snapshot()
                snap["pushed"] = time.time()
                self.wfile.write(b"data: " + json.dumps(snap).encode() + b"\n\n")
                self.wfile.flush()
                srv.pushes += 1
                time.sleep(1.0 / PUSH_HZ)
        except (BrokenPipeError, ConnectionResetError):
            pass


class PageServer:
    def __init__(self, dashboard, port=0, host="127.0.0.1"):
        self.httpd = ThreadingHTTPServer((host, port), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.dashboard = dashboard
        self.httpd.html = PAGE.read_bytes()
        self.httpd.texts = json.dumps(page_texts(), ensure_ascii=False).encode()
        self.httpd.stopping = threading.Event()
        self.httpd.pushes = 0
        self.thread = None
        host, port = self.httpd.server_address[:2]
        self.url = "http://%s:%d/" % (host, port)

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="parlour-page",
                                       daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.httpd.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
