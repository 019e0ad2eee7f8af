"""A link event in plain text: its fields as `key=value`, and the plain
lines of an event, a host action or a remark (the table view's --plain
mode, `mjctl monitor`)."""

import json

from host_tools.texts import pad, t


def value_text(v):
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return "null" if v is None else str(v)


def fields_text(fields):
    return " ".join("%s=%s" % (k, value_text(v)) for k, v in fields.items())


def plain_lines(entry, extra=()):
    """The plain lines of one entry: a link event `t  name  fields`, a host
    action `t  > name  fields`, then indented extra lines (a fault's cause
    and fix; a `#` remark). No entry: the extra lines alone."""
    out = []
    if entry is not None:
        name = ("> " + entry["name"]) if entry["host"] else entry["name"]
        out.append("%10.3f  %-10s %s" % (entry["t"] / 1000.0, name, fields_text(entry["fields"])))
    for key, text in extra:
        if key == "#":
            out.append("# " + text)
        else:
            out.append("%12s%s %s" % ("", pad(key + t("punct.colon").rstrip(), 6), text))
    return [line.rstrip() for line in out]
