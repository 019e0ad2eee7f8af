"""A text Gantt of one table cycle, from the virtual table's own event log
(VirtualTable.log: outputs the firmware set, tiles stacked, lifters at
their ends, RFID scans when instrumented) and the firmware's link events
(`state`, `walls`, `dice`). Pure: no table, no link.

    rows = cycle_spans(table.log, events, cap=36)
    print(render(rows, start, end))
"""

LANES = 4
ROWS = ("plate",) + tuple("lane %d" % n for n in range(LANES)) + (
    "audit", "lift", "dealer key", "dice")


def _on_off(log, label, start, end):
    """Spans [t_on, t_off) of an output from its ("out", None, label, value)
    entries: on while the value is non-zero (an output still on at `end`
    ends there)."""
    spans, on = [], None
    for t, source, _index, what, *detail in log:
        if source != "out" or what != label or not start <= t <= end:
            continue
        if detail[0] and on is None:
            on = t
        elif not detail[0] and on is not None:
            spans.append((on, t))
            on = None
    if on is not None:
        spans.append((on, end))
    return spans


def cycle_spans(log, events, cap, start=None):
    """[(row, t0, t1), ...] of the cycle that `events` (the firmware's link
    events, each with "t") show: from its `building` state (or `start`) to
    its `dice`. Rows: the plate turning, each lane from its feed on to its
    cap-th tile stacked, the audit (each RFID scan of a wall being built,
    request to reply, when the log has them; else last lane full to the
    `walls` event), the lifters from up on to the last at the top, the
    dealer's key (walls up to `rolling`) and the dice's roll."""
    if start is None:
        start = _first(events, lambda e: e["ev"] == "state" and e["state"] == "building")
    end = _first(events, lambda e: e["ev"] == "dice" and (start is None or e["t"] >= start))
    if start is None or end is None:
        raise ValueError("no cycle (building ... dice) in these events")
    walls = _first(events, lambda e: e["ev"] == "walls" and start <= e["t"] <= end)
    rolling = _first(events, lambda e: e["ev"] == "state" and e["state"] == "rolling"
                     and start <= e["t"] <= end)
    rows = [("plate", a, b) for a, b in _on_off(log, "plate_motor", start, end)]
    lane_rows, lane_done = _lanes(log, cap, start, end)
    rows += lane_rows
    rows += _audit(log, start, end, lane_done, walls)
    rows += _lift_and_dice(log, start, end, rolling)
    return rows


def _first(events, pred):
    """The time of the first event `pred` takes, or None."""
    for e in events:
        if pred(e):
            return e["t"]
    return None


def _lanes(log, cap, start, end):
    """(rows, {lane: t full}): each lane that fed, from its feed on to its
    cap-th tile stacked (or its feed off when the log has no such tile)."""
    rows, lane_done = [], {}
    for n in range(LANES):
        feed = _on_off(log, "lane_feed:%d" % n, start, end)
        full = None
        for t, source, index, what, *detail in log:
            if (source == "lane" and index == n and what == "stacked" and start <= t <= end
                    and len(detail) > 1 and detail[1] == cap):
                full = t
                break
        if feed:
            lane_done[n] = full if full is not None else feed[0][1]
            rows.append(("lane %d" % n, feed[0][0], lane_done[n]))
    return rows, lane_done


def _audit(log, start, end, lane_done, walls):
    """The audit's rows: each RFID scan, request to reply; without scans in
    the log, the last lane full to the `walls` event."""
    scans, pending = [], None
    for t, source, _index, what, *detail in log:
        if source != "rfid" or not start <= t <= end:
            continue
        if what == "scan" and detail and detail[0] == 0:
            pending = t
        elif what == "reply" and pending is not None:
            scans.append((pending, t))
            pending = None
    if scans:
        return [("audit", a, b) for a, b in scans]
    if lane_done and walls is not None:
        return [("audit", max(lane_done.values()), walls)]
    return []


def _lift_and_dice(log, start, end, rolling):
    """The lifters from up on to the last at the top, the dealer's key from
    there to `rolling`, the dice from `rolling` to the cycle's end."""
    rows = []
    up = [t for t, source, _i, what, *detail in log
          if source == "out" and what.startswith("lift_up:") and detail[0]
          and start <= t <= end]
    tops = [t for t, source, _i, what, *_ in log
            if source == "lifter" and what == "top" and start <= t <= end]
    if up and tops:
        rows.append(("lift", min(up), max(tops)))
        if rolling is not None:
            rows.append(("dealer key", max(tops), rolling))
    if rolling is not None:
        rows.append(("dice", rolling, end))
    return rows


def render(rows, start, end, width=70, step_s=5, bound_end=None):
    """The rows as text: one line per row name (in ROWS order, then any
    other), '#' where a span runs, a time axis in seconds from `start`,
    each line ending with its first start and last end. `bound_end`: a
    last line marking where the lower bound ends."""
    if end <= start:
        raise ValueError("empty time range")
    last = max(end, bound_end or end)
    scale = width / float(last - start)

    def col(t):
        return min(width - 1, max(0, int((t - start) * scale)))

    names = [r for r in ROWS if any(row[0] == r for row in rows)]
    names += [r for r in dict.fromkeys(row[0] for row in rows) if r not in names]
    label_w = max([len(n) for n in names] + [len("bound")])
    out = []
    axis = [" "] * (width + 8)
    s = 0
    while start + s * 1000 <= last:
        c = col(start + s * 1000)
        mark = "%ds" % s
        axis[c:c + len(mark)] = mark
        s += step_s
    out.append(" " * (label_w + 2) + "".join(axis).rstrip())
    for name in names:
        spans = [(a, b) for r, a, b in rows if r == name]
        line = [" "] * width
        for a, b in spans:
            for c in range(col(a), max(col(b), col(a) + 1)):
                line[c] = "#"
        t0 = min(a for a, _ in spans)
        t1 = max(b for _, b in spans)
        out.append("%-*s  %s  %6.2f-%6.2f s" % (label_w, name, "".join(line),
                                                (t0 - start) / 1000.0, (t1 - start) / 1000.0))
    if bound_end is not None:
        line = [" "] * width
        line[col(bound_end)] = "|"
        out.append("%-*s  %s  %13.2f s" % (label_w, "bound", "".join(line),
                                           (bound_end - start) / 1000.0))
    return "\n".join(out)
