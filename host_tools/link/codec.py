"""The host's half of the link codec (firmware/link/protocol.py holds the
tables, firmware/link/codec.py the writer both sides use): a request written as a frame, and
an answer or event read back and checked against the tables. Kept here so
that the controller, which never sends a request nor reads an answer, does
not carry it in its heap."""

import json

from firmware import frame
from firmware.link import codec, protocol
from firmware.link.codec import LinkError

# The codec's tables and frame kinds, by the host's names. The error codes:
# on the wire (the controller's), and the host's own.
REQUEST, RESPONSE, EVENT, ERROR = protocol.REQUEST, protocol.RESPONSE, protocol.EVENT, protocol.ERROR
EVENTS = protocol.EVENTS
ERROR_FIELDS, NESTED, SECRET = protocol.ERROR_FIELDS, protocol.NESTED, protocol.SECRET_KEYS
ERRORS = protocol.ERRORS
HOST_ERRORS = protocol.HOST_ERRORS


def _split(table):
    """The controller's table of requests (one line each: op, who may send
    it, where its handler is, its arguments, ">", its answer's fields) as
    the host's two tables of the codec's form, "name field:type ..." per
    line: the requests' arguments, and their answers."""
    requests, answers = [], []
    for line in table.splitlines():
        head, _, answer = line.partition(" > ")
        op, _who, _home, *args = head.split(" ")
        requests.append(" ".join([op] + args))
        answers.append(op + " " + answer)
    return "\n".join(requests) + "\n", "\n".join(answers) + "\n"


REQUESTS, RESPONSES = _split(protocol.REQUESTS)


def encode_request(seq, op, **args):
    """One REQUEST frame as bytes; LinkError if op/args are not in the table,
    or not ASCII (the controller refuses other bytes: docs/protocol.md)."""
    buf, args = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD), dict(args, op=op)
    try:
        n = codec.write(buf, kind=REQUEST, seq=seq, obj=args, spec=REQUESTS, key="op", head="op",
                        value=None, reveal=False, code="unknown_op")
    except LinkError as e:
        raise LinkError(e.code if e.code in ("too_big", "unknown_op") else "bad_request", e.message)
    payload = buf[frame.HEADER:n - 2]
    if not payload.isascii():
        raise LinkError("bad_request", "requests are ASCII: %r" % bytes(payload)[:60])
    return bytes(buf[:n])


def decode(kind, payload, op=None):
    """A RESPONSE (to request `op`) or EVENT payload as a dict checked
    against the table; an ERROR as a LinkError (returned: the caller raises)."""
    code = "bad_event" if kind == EVENT else "bad_response"
    try:
        obj = json.loads(str(payload, "utf-8"))
    except Exception as e:
        raise LinkError(code, "payload is not UTF-8 JSON (%s)" % e)
    if type(obj) is not dict:
        raise LinkError(code, "payload is not a JSON object")
    if kind == ERROR and obj.get("ok") is False:
        codec.check(obj, ERROR_FIELDS, 0, len(ERROR_FIELDS), "ok", code)
        return LinkError(obj["error"], obj["message"], obj)
    if kind == EVENT:
        spec, head, name = EVENTS, "ev", obj.get("ev")
    elif kind == RESPONSE and obj.get("ok") is True and obj.get("op") == op:
        spec, head, name = RESPONSES, "ok", op
    else:
        raise LinkError(code, "not a response to %s: %r" % (op, obj))
    p = codec.find(spec, name, 0, len(spec), "\n")
    if p < 0:
        raise LinkError(code, "%s %r is not in the table"
                        % ("ev" if kind == EVENT else "op", name))
    codec.check(obj, spec, p + 1, spec.find("\n", p), head, code)
    return obj
