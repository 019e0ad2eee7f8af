"""What each of a table's messages may hold (docs/fleet.md, Topics and
payloads), checked field by field where a message enters the dashboard's
model (model.py): a field of the wrong kind is dropped and counted, the
message's other fields kept; a field not listed is left out. So the view
the page and `mjctl fleet` render holds only the kinds they expect,
whatever a broken or hostile publisher sends.

    data, dropped = clean("counters", json.loads(payload))
"""

MAX_TEXT = 200             # a text field's length at most (a fault's name, a build)
MAX_ITEMS = 64             # a list's or a detail's members at most


def count(v):
    """A count, a code, a time in ms: an int, never negative (a bool is
    not one: JSON's true is not 1)."""
    return type(v) is int and v >= 0


def text(v):
    return type(v) is str and len(v) <= MAX_TEXT


def flag(v):
    return type(v) is bool


def maybe(kind):
    """`kind`, or null."""
    return lambda v: v is None or kind(v)


def counts(v):
    """tiles_fed: a count per lane."""
    return type(v) is list and len(v) <= MAX_ITEMS and all(count(x) for x in v)


def pairs(v):
    """A fault count by code: [[code, n], ...]."""
    return (type(v) is list and len(v) <= MAX_ITEMS
            and all(type(p) is list and len(p) == 2 and count(p[0]) and count(p[1]) for p in v))


def scalars(v):
    """A fault's detail: a lane, a side, a sensor; plain members only."""
    return (type(v) is dict and len(v) <= MAX_ITEMS
            and all(text(k) and (m is None or type(m) in (int, bool) or text(m))
                    for k, m in v.items()))


# Each leaf's fields and their kinds; a dict is a nested object, checked
# member by member.
SCHEMAS = {
    "state": {"state": text, "fault": maybe(count), "t": maybe(count)},
    "fault": {"code": count, "name": text, "detail": maybe(scalars), "t": maybe(count)},
    "cleared": {"code": maybe(count), "t": maybe(count)},
    "hand": {"winner": maybe(count), "draw": flag, "dealer": count, "wins_in_row": count,
             "streak": count, "hands": count, "t": maybe(count)},
    "counters": {"cycles": count, "hands": count, "lifts": count, "tiles_fed": counts,
                 "faults": pairs},
    "health": {"uptime": count, "heap_free": count, "boots": count,
               "link": {"errors": count, "dropped": count, "overruns": count},
               "mqtt": {"dropped": count, "errors": count, "refused": count, "connects": count,
                        "sent": count, "skipped": count}},
    "build": {"fw": text, "build": text},
}


def clean(leaf, data):
    """(the fields of `data` that `leaf`'s schema lists, each of its kind;
    how many were dropped). `data` is a JSON object (a dict)."""
    return _clean(SCHEMAS.get(leaf, {}), data)


def _clean(schema, data):
    out, dropped = {}, 0
    for key, kind in schema.items():
        if key not in data:
            continue
        v = data[key]
        if isinstance(kind, dict):
            if type(v) is dict:
                out[key], n = _clean(kind, v)
                dropped += n
            else:
                dropped += 1
        elif kind(v):
            out[key] = v
        else:
            dropped += 1
    return out, dropped
