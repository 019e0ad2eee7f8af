"""The parlour page: a small web server on this PC that subscribes to the
broker with the dashboard's read-only user and shows every table live
(docs/fleet.md, The page).

    with Dashboard(port, ("dashboard", pw), expect=[("hall", "t1")]) as d:
        with PageServer(d) as page:
            print(page.url)

GET /         the page (page.html), with its words and the view as they
              are now inside it: the tables show at the first paint,
              whatever the stream's timing (page.js renders them)
GET /page.js  its script
GET /events   Server-Sent Events: the whole view (FleetModel.snapshot) as
              JSON at each change, at most PUSH_HZ a second, and at least
              once a second (a table turning silent shows within a second
              of its timeout)
GET /state    the same view once
GET /texts    the page's words in English and Chinese (host_tools/texts)
GET /days     the day's figures of the last DAYS_SHOWN days (days.py)
GET /day.csv?day=YYYY-MM-DD&lang=zh   one day's figures as CSV

Python's own http.server, one thread per client, on 127.0.0.1 unless told.
"""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import paho.mqtt.client as mqtt

from host_tools import texts
from host_tools.fleet import days as days_mod
from host_tools.fleet.model import FleetModel
from host_tools.texts import faults as fault_table

PUSH_HZ = 5.0             # at most this many pushes a second to each client
BEAT_S = 1.0              # and at least one a second
RETRY_MS = 1000           # the browser's wait before it opens a lost stream again
KEEP_S = 5.0              # the day's figures saved this often (and at the end)
DAYS_SHOWN = 8            # today and the 7 days before it
PAGE = Path(__file__).with_name("page.html")
SCRIPT = Path(__file__).with_name("page.js")
BOOT = b"/*BOOT*/null"    # where page.html takes its words and first view


class Dashboard:
    """The dashboard's subscriber: every message under parlour/# into a
    FleetModel, under a lock; `changed` wakes the page's clients. `on_fault`
    (a function of table id, payload, arrival) sees each fault message as
    it arrives (host_tools/fleet/measure.py times them). `store`: a
    days.Store the day's figures come from at the start and, when it is
    not read-only, are saved to every KEEP_S and at the stop."""

    def __init__(self, port, user, expect=(), host="127.0.0.1", stale_s=None, on_fault=None,
                 store=None, clock=time.monotonic, wall=time.time):
        kw = {} if stale_s is None else {"stale_s": stale_s}
        self.model = FleetModel(expect=expect, clock=clock, wall=wall, **kw)
        self.store = store
        if store is not None:
            self.model.restore(store.memory(), store.day(days_mod.day_of(wall())))
        self.stopping = threading.Event()
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
            self.model.broker_since = time.time()
            self._bump()
        if not reason.is_failure:
            client.subscribe("parlour/#")

    def _on_disconnect(self, client, userdata, flags, reason, properties):
        with self.lock:
            if self.model.broker:      # lost now: since when (a failed retry is not news)
                self.model.broker_since = time.time()
            self.model.broker = False
            self._bump()

    def _on_message(self, client, userdata, msg):
        now = self.model.clock()
        self.feed(msg.topic, msg.payload, now)
        if self.on_fault is not None and msg.topic.endswith("/fault"):
            self.on_fault(msg.topic.split("/")[3], msg.payload, now)

    def feed(self, topic, payload, now=None):
        """One message into the view, as the broker gives it (the tests
        give theirs here too)."""
        with self.lock:
            try:
                changed = self.model.feed(topic, payload, now)
            except Exception:      # a bug in the model: one message lost, not paho's thread
                self.model.bad += 1
                changed = False
            if changed:
                self._bump()

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

    # -- the day's figures ------------------------------------------------------------

    def keep(self):
        """The day's figures into the store now (a read-only one: never)."""
        if self.store is None or self.store.readonly:
            return
        with self.lock:
            self.model.snapshot()          # every table's time counted to now
            rows, memory = self.model.take_days(), self.model.memory()
        self.store.save(rows, memory)

    def _keeper(self):
        while not self.stopping.wait(KEEP_S):
            self.keep()

    def day_rows(self, day, keep=True):
        """Every table's figures of `day`: the store's (saved first unless
        `keep` is false), or today's of the view alone without a store."""
        if keep:
            self.keep()
        if self.store is not None:
            return self.store.day(day)
        with self.lock:
            self.model.snapshot()
            return [dict(d.figures(), day=d.day, site=site, tbl=tid)
                    for site, tid, d in self.model.take_days() if d.day == day]

    def days(self):
        """The last DAYS_SHOWN days, newest first: each day's parlour
        totals and its tables' rows."""
        out = []
        self.keep()
        for day in reversed(days_mod.days_before(days_mod.day_of(self.model.wall()), DAYS_SHOWN)):
            rows = self.day_rows(day, keep=False)
            out.append({"day": day, "totals": days_mod.totals(rows), "tables": rows})
        return out

    def start(self):
        self.c.connect_async(self.host, self.port, keepalive=10)
        self.c.loop_start()
        if self.store is not None and not self.store.readonly:
            threading.Thread(target=self._keeper, name="dashboard-keeper", daemon=True).start()
        return self

    def stop(self):
        self.stopping.set()
        self.c.disconnect()
        self.c.loop_stop()
        self.keep()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def page_texts():
    """The page's words: fleet.*, state.*, detail.* and resume.* in each
    language, and every fault's name, cause, fix and short name by code."""
    out = {}
    for lang in sorted(texts.LANGS):
        table = texts.LANGS[lang].TEXTS
        words = {k: v for k, v in table.items()
                 if k.startswith(("fleet.", "state.", "detail.", "resume."))}
        old = texts.lang()
        texts.set_lang(lang)
        try:
            # name, cause, fix, and the owner's short name (texts.fault_short)
            fl = {str(code): list(texts.fault_texts(code)) + [texts.fault_short(code)]
                  for code in fault_table.codes()}
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
        url = urlsplit(self.path)
        path = url.path
        if path == "/":
            self._send(200, "text/html; charset=utf-8", self._page())
        elif path == "/page.js":
            self._send(200, "text/javascript; charset=utf-8", srv.script)
        elif path == "/texts":
            self._send(200, "application/json", srv.texts)
        elif path == "/state":
            self._send(200, "application/json", json.dumps(srv.dashboard.snapshot()).encode())
        elif path == "/days":
            self._send(200, "application/json", json.dumps(srv.dashboard.days()).encode())
        elif path == "/day.csv":
            self._csv(parse_qs(url.query))
        elif path == "/events":
            self._events()
        else:
            self._send(404, "text/plain", b"not found\n")

    def _page(self):
        """page.html with its words and the view as it is now: JSON inside
        a script element, every <, > and & escaped so that no text a table
        sends can close the element."""
        boot = json.dumps({"view": self.server.dashboard.snapshot()}).encode()
        boot = boot.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
        return self.server.html.replace(BOOT, boot)

    def _csv(self, query):
        """One day's figures (days.csv_text), UTF-8 with a byte-order mark
        so that a spreadsheet reads its Chinese header right."""
        lang = (query.get("lang") or ["en"])[0]
        lang = lang if lang in texts.LANGS else "en"
        day = (query.get("day") or [""])[0]
        try:
            days_mod.parse_day(day)
        except ValueError:
            msg = texts.LANGS[lang].TEXTS["err.fleet_day"].format(day=day)
            self._send(400, "text/plain; charset=utf-8", (msg + "\n").encode())
            return
        body = days_mod.csv_text(self.server.dashboard.day_rows(day), lang)
        self.send_response(200)
        self.send_header("Content-Type", "text/csv; charset=utf-8")
        self.send_header("Content-Disposition", 'attachment; filename="parlour-%s.csv"' % day)
        data = body.encode("utf-8-sig")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def _events(self):
        srv = self.server
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        version = -1
        try:
            self.wfile.write(b"retry: %d\n\n" % RETRY_MS)
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
        self.httpd.texts = json.dumps(page_texts(), ensure_ascii=False).encode()
        # The words, the same for every load, go in once; the view at each.
        self.httpd.html = PAGE.read_bytes().replace(
            b"/*TEXTS*/null", self.httpd.texts.replace(b"<", b"\\u003c"))
        self.httpd.script = SCRIPT.read_bytes()
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
