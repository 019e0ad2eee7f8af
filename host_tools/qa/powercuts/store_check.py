"""Nothing the table persisted is corrupt after a cut: the files of its
flash store against what the firmware loads and what the table was
given."""

import os

FAULT_LOG = 16                  # the fault log's entries in counters.json, at most


def store_problems(sim, config_bytes, tags_bytes):
    """The problems with `sim`'s store (a list, empty when none), and
    whether a torn save left its `.new` file: `counters.json` loads (its
    CRC) and has the shape the firmware takes (persist.load and the checks
    TableController.boot makes); `config.json` and `tags.txt` are byte for
    byte `config_bytes` and `tags_bytes` and still load; `service.key` is
    the key."""
    from firmware import config as fwconfig
    from firmware import persist
    from firmware import tags as fwtags
    store = sim.store
    problems = []
    try:
        saved = persist.load(os.path.join(store, "counters.json"))
        if saved is None:
            problems.append("counters.json missing")
        elif not _counters_shaped(saved):
            problems.append("counters.json of another shape: %s" % saved)
    except (ValueError, KeyError, TypeError) as e:
        problems.append("counters.json: %s" % e)
    new_file_left = os.path.exists(os.path.join(store, "counters.json.new"))
    for name, want in (("config.json", config_bytes), ("tags.txt", tags_bytes)):
        with open(os.path.join(store, name), "rb") as f:
            if f.read() != want:
                problems.append("%s changed" % name)
    try:
        fwconfig.load(os.path.join(store, "config.json"))
    except ValueError as e:
        problems.append("config.json: %s" % e)
    try:
        fwtags.load(os.path.join(store, "tags.txt"))
    except ValueError as e:
        problems.append("tags.txt: %s" % e)
    with open(os.path.join(store, "service.key"), "rb") as f:
        if f.read() != sim.key:
            problems.append("service.key changed")
    return problems, new_file_left


def _counters_shaped(saved):
    """Whether saved counters have the shape the firmware takes (a
    KeyError or TypeError when a part is missing or of another type)."""
    fed, log = saved["tiles_fed"], saved["log"]
    return (all(type(saved[k]) is int and saved[k] >= 0
                for k in ("cycles", "hands", "lifts"))
            and len(fed) == 4 and all(type(x) is int for x in fed)
            and len(log) <= FAULT_LOG
            and all(len(e) == 4 for e in log)
            and all(0 <= code < 64 and 0 < m <= 255 for code, m in saved["faults"]))
