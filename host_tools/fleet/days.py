"""The day's figures of every table (docs/fleet.md, The day's figures):
hands played, hours in play, faults, time stopped and time offline, per
local day, kept in a small SQLite file by the page's process so that they
outlast its restarts, and read by `mjctl fleet` (its live view, and
`--day D --csv`).

Hands and faults are each table's own counters (`counters` and `hand`
messages): a day's count is the counter's rise over the day, from a mark,
the counter's last value seen. The store keeps the marks, so hands played
while the page was down count when it comes back (on the day it comes
back); a counter that goes down (the table's counters were reset) counts
from zero again. The times are wall time as the page saw each table: in
play, in fault, offline; what it did not see (the page down) is not
counted.

    store = Store(path)                      # the page's: created if missing
    store.save(model.take_days(), model.memory())
    rows = Store(path, readonly=True).day("2026-12-05")
    print(csv_text(rows, "zh"), end="")
"""

import csv
import io
import re
import sqlite3
import time
from pathlib import Path

DAY = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
COUNTS = ("hands", "faults")
TIMES = ("in_play_s", "stopped_s", "offline_s")
FIGURES = COUNTS + TIMES
# What a table's process remembers of it between two days and across its
# restarts, besides the day's figures.
MEMORY = ("hands_mark", "faults_mark", "dealer", "fault_code", "fault_since", "offline_since")

SCHEMA = """
CREATE TABLE IF NOT EXISTS day (
    day TEXT NOT NULL, site TEXT NOT NULL, tbl TEXT NOT NULL,
    hands INTEGER NOT NULL, faults INTEGER NOT NULL,
    in_play_s REAL NOT NULL, stopped_s REAL NOT NULL, offline_s REAL NOT NULL,
    PRIMARY KEY (day, site, tbl));
CREATE TABLE IF NOT EXISTS memory (
    site TEXT NOT NULL, tbl TEXT NOT NULL,
    hands_mark INTEGER, faults_mark INTEGER, dealer INTEGER,
    fault_code INTEGER, fault_since REAL, offline_since REAL,
    PRIMARY KEY (site, tbl));
"""


def natural(key):
    """t2 before t10."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", key)]


def day_of(wall):
    """The local date of an epoch time, YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.localtime(wall))


def parse_day(text):
    """`text` if it is a date YYYY-MM-DD that exists, else ValueError."""
    if not isinstance(text, str) or not DAY.match(text):
        raise ValueError(text)
    time.strptime(text, "%Y-%m-%d")          # 2026-02-30: ValueError
    return text


def days_before(day, n):
    """The n days that end with `day`, oldest first."""
    noon = time.mktime(time.strptime(day + " 12", "%Y-%m-%d %H"))
    return [day_of(noon - 86400 * k) for k in range(n - 1, -1, -1)]


def rise(mark, n):
    """(how much a counter rose since its mark, its new mark): nothing
    the first time it is seen; from zero when it went down (reset)."""
    if mark is None:
        return 0, n
    if n >= mark:
        return n - mark, n
    return n, n


class TableDay:
    """One table's figures for one local day."""

    def __init__(self, day, row=None):
        self.day = day
        self.hands = self.faults = 0
        self.in_play_s = self.stopped_s = self.offline_s = 0.0
        for k in FIGURES:
            if row is not None and row.get(k) is not None:
                setattr(self, k, row[k])

    def figures(self):
        return {k: getattr(self, k) if k in COUNTS else round(getattr(self, k), 1)
                for k in FIGURES}


class Store:
    """The SQLite file: `day` (a row per day and table) and `memory` (a
    row per table). readonly: opened for reading only, never created
    (mjctl fleet); sqlite3.Error when it cannot be read."""

    def __init__(self, path, readonly=False):
        self.path = Path(path)
        self.readonly = readonly
        if readonly:
            if not self.path.exists():
                raise sqlite3.OperationalError("no such file")
            self.db = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True, timeout=5,
                                      check_same_thread=False)
            self.db.execute("SELECT 1 FROM day LIMIT 1")
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=5, check_same_thread=False)
            self.db.executescript(SCHEMA)
        self.db.row_factory = sqlite3.Row

    def close(self):
        self.db.close()

    def save(self, days, memory):
        """days: (site, table, TableDay) each; memory: {(site, table): {MEMORY...}}.
        One transaction: a reader sees all of it or none."""
        with self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO day VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(d.day, site, tid) + tuple(d.figures()[k] for k in FIGURES)
                 for site, tid, d in days])
            self.db.executemany(
                "INSERT OR REPLACE INTO memory VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(site, tid) + tuple(m.get(k) for k in MEMORY)
                 for (site, tid), m in memory.items()])

    def day(self, day):
        """Every table's figures of `day`, as dicts, by site and table."""
        rows = [dict(r) for r in self.db.execute("SELECT * FROM day WHERE day = ?", (day,))]
        return sorted(rows, key=lambda r: (natural(r["site"]), natural(r["tbl"])))

    def since(self, first_day):
        """Every row from `first_day` on, as dicts."""
        rows = self.db.execute("SELECT * FROM day WHERE day >= ? ORDER BY day", (first_day,))
        return [dict(r) for r in rows]

    def memory(self):
        return {(r["site"], r["tbl"]): {k: r[k] for k in MEMORY}
                for r in self.db.execute("SELECT * FROM memory")}


def totals(rows):
    """The parlour's figures: the sum of its tables'."""
    return {k: sum(r[k] for r in rows) for k in FIGURES}


def csv_text(rows, lang):
    """The day's CSV: the header in `lang`, a line per table; hours in
    play in hours, times stopped and offline in minutes (what a parlour
    charges and checks by)."""
    from host_tools.texts import LANGS
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(LANGS[lang].TEXTS["fleet.csv_header"].split(","))
    for r in rows:
        w.writerow([r["day"], r["site"], r["tbl"], r["hands"], "%.2f" % (r["in_play_s"] / 3600.0),
                    r["faults"], "%.1f" % (r["stopped_s"] / 60.0),
                    "%.1f" % (r["offline_s"] / 60.0)])
    return out.getvalue()
