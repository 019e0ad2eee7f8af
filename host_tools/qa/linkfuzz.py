"""Fuzzing the link: mutated, truncated, oversized and
random frames, counted, in process and on the live link.

    python -m host_tools.qa.linkfuzz [--frames N] [--seed S] [--json]

`mutants(rng, n, base)` makes the frames a damaged line or a broken host
could send (the kinds are listed in KINDS): valid requests with bits
flipped, cut short, their length field changed, oversized (a header over
the bound, or a whole frame longer than the controller's 160-byte request
buffer), a good CRC around random bytes, a good CRC around JSON that is
almost a request (a wrong type, an unknown field or op, nesting, long
strings, not an object), frames of another kind, a sync pair and random
bytes, plain noise. Their seqs are base..base+63 and no flip touches a
seq, so an answer to one is never taken for the answer to the valid
request that follows.

`inprocess(frames, seed)` feeds them, in bursts, to the controller's own
`LinkServer` (firmware/link/server.py, frame.py, codec.py: the code that
runs on the board, imported on CPython, over a fake line and HAL),
and after every burst checks:

* no crash: no exception out of `poll`;
* no hang: the burst is read in a bounded number of polls (each reads at
  most 8 x 32 bytes and answers at most 2 requests), and one quiet line
  (100 ms, the server's own rule) later nothing is half assembled;
* the next valid frame answered: a `status` or `hello` with a fresh seq
  gets its RESPONSE in the first poll after it;
* garbage counted: every byte fed is a byte of a good frame, counted in
  `dropped` (status.link.garbage), or none is left over; every good frame
  is answered exactly once (RESPONSE, or ERROR for a bad payload, kind or
  op) or is a retry answered again (`retries`); bad CRCs are counted.

`live_burst(link, rng, n)` sends n of them on a live link (a LinkClient)
and then a `status`, which must be answered (hw_tests/test_link.py, the
soak between hands).
"""

import argparse
import binascii
import json
import random
import sys
import time

from firmware import frame
from firmware.link import codec
from host_tools.link import codec as link_codec

# What a mutant is, by kind: (name, weight).
KINDS = (("flipped", 3), ("truncated", 2), ("length", 2), ("oversized", 1),
         ("random_payload", 1), ("bad_json", 3), ("other_kind", 1), ("sync_noise", 1),
         ("noise", 1))
_NAMES = [k for k, _ in KINDS]
_WEIGHTS = [w for _, w in KINDS]
OPS = [{"op": "status"}, {"op": "hello", "proto": codec.PROTO_VERSION},
       {"op": "faults", "n": 2}, {"op": "config_get", "key": "timings"},
       {"op": "counters"}, {"op": "hand"}]
# Requests that only read: a mutant never makes the table act, even if a
# mangled one decodes (a CRC-16 finds every error of 1 to 3 bits).
_READ_OPS = ("status", "hello", "faults", "config_get", "counters", "hand", "sensors")
_ANY = (0, -1, 2 ** 31, 2 ** 64, 1.5, "x", "", "é\u4e2d", None, True, [], {}, [1, [2, [3]]],
        {"a": {"b": {}}}, "A" * 300)


def raw_request(seq, obj):
    return frame.encode(link_codec.REQUEST, seq, json.dumps(obj, separators=(",", ":")).encode())


def _almost_request(rng):
    """JSON that is nearly a request: bytes a host with a bug could send."""
    names = [line.split()[0] for line in link_codec.REQUESTS.strip().split("\n")]
    k = rng.randrange(8)
    if k == 0:                                     # a read op with a wrong-typed field
        return json.dumps({"op": rng.choice(_READ_OPS), rng.choice(["n", "key", "proto"]):
                           rng.choice(_ANY)})
    if k == 1:                                     # an unknown field
        return json.dumps({"op": rng.choice(_READ_OPS), "x%d" % rng.randrange(99): 1})
    if k == 2:                                     # an op not in the table, or not a str
        return json.dumps({"op": rng.choice(["dance", "", "STATUS", "status ", 7, None,
                                             ["status"], "hello\n"])})
    if k == 3:                                     # not an object
        return json.dumps(rng.choice([[], [{"op": "status"}], "status", 1, None, True]))
    if k == 4:                                     # deep nesting
        d = rng.randrange(1, 40)
        return '{"op":"status","n":' + "[" * d + "]" * d + "}"
    if k == 5:                                     # bytes of JSON flipped or cut
        text = bytearray(json.dumps(rng.choice(OPS)).encode())
        for _ in range(rng.randrange(1, 4)):
            text[rng.randrange(len(text))] = rng.randrange(256)
        return bytes(text[:rng.randrange(1, len(text) + 1)])
    if k == 6:                                     # a service op with no or a bad session
        op = rng.choice([n for n in names if n.startswith(("service_", "rfid_", "jog",
                                                          "config_set"))])
        return json.dumps({"op": op, "session": rng.choice(["", "00" * 8, "zz"])})
    return json.dumps({"op": "hello", "proto": rng.choice([0, -1, codec.PROTO_VERSION + 1,
                                                           "4", 4.0, None])})


def mutants(rng, n, base, counts=None):
    """n damaged frames (bytes), each of a kind of KINDS; seqs base..base+63.
    `counts`: a dict kind -> number made, added to."""
    out = []
    for kind in rng.choices(_NAMES, _WEIGHTS, k=n):
        seq = (base + rng.randrange(64)) & 0xFF
        if counts is not None:
            counts[kind] = counts.get(kind, 0) + 1
        good = bytearray(raw_request(seq, rng.choice(OPS)))
        if kind == "flipped":                     # 1..3 bits, never the seq byte
            for _ in range(rng.randrange(1, 4)):
                at = rng.randrange(len(good) - 1)
                at += at >= 3
                good[at] ^= 1 << rng.randrange(8)
        elif kind == "truncated":
            good = good[:rng.randrange(1, len(good))]
        elif kind == "length":                    # the length field lies
            good[4] = rng.randrange(256)
            good[5] = rng.randrange(3)
        elif kind == "oversized":
            if rng.random() < 0.5:                # a header over the bound
                m = rng.randrange(frame.MAX_PAYLOAD + 1, 0x10000)
                good[4], good[5] = m & 0xFF, m >> 8
                good += bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
            else:                                 # whole, but over the request buffer
                pad = "p" * rng.randrange(160, frame.MAX_PAYLOAD - 30)
                good = bytearray(raw_request(seq, {"op": "status", "pad": pad}))
        elif kind == "random_payload":            # a good CRC around anything
            payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 150)))
            good = bytearray(frame.encode(link_codec.REQUEST, seq, payload))
        elif kind == "bad_json":                  # a good CRC around nearly a request
            text = _almost_request(rng)
            payload = text if isinstance(text, bytes) else text.encode()
            good = bytearray(frame.encode(link_codec.REQUEST, seq, payload[:frame.MAX_PAYLOAD]))
        elif kind == "other_kind":
            good = bytearray(frame.encode(rng.choice([k for k in range(256)
                                                      if k != link_codec.REQUEST]), seq, b"{}"))
        elif kind == "sync_noise":                # a sync pair, then anything
            good = bytearray(b"\xa5\x5a" + bytes(rng.randrange(256)
                                                 for _ in range(rng.randrange(0, 40))))
        else:                                     # noise
            good = bytearray(rng.randrange(256) for _ in range(rng.randrange(1, 120)))
        out.append(bytes(good))
    return out


# -- in process: the controller's LinkServer on CPython ------------------------


class _Line:
    """The host's side of the link: bytes waiting, frames written."""

    def __init__(self):
        self.data = bytearray()
        self.at = 0
        self.out = []

    def readinto(self, buf):
        n = min(len(buf), len(self.data) - self.at)
        buf[:n] = self.data[self.at:self.at + n]
        self.at += n
        if self.at == len(self.data):
            self.data = bytearray()
            self.at = 0
        return n

    def write(self, buf, n):
        self.out.append(bytes(buf[:n]))
        return True


class _Hal:
    """What the LinkServer uses of a HAL with no controller attached: the
    link's line, the clock (events' times) and random bytes (a service
    challenge)."""

    def __init__(self):
        self.link = _Line()
        self.rng = random.Random("linkfuzz-hal")

    def ticks_ms(self):
        return 0

    def rand(self, n):
        return bytes(self.rng.randrange(256) for _ in range(n))


def _server():
    from firmware.link.server import LinkServer
    hal = _Hal()
    server = LinkServer(hal, "0.0.0", "fuzz")
    good = [0]
    r = server.reader
    feed = r.feed

    def counted(*args):                 # bytes of every good frame, for the accounting
        i = feed(*args)
        if r.ready:
            good[0] += frame.OVERHEAD + r.length
        return i
    r.feed = counted
    return server, hal.link, good


def _progress(server, line):
    """What a poll that reads a byte changes: the reader's counts and the
    frame it assembles, and the answers written."""
    r = server.reader
    return r.frames, r.dropped, r.bad_crc, r.n, r.backlog(), len(line.out)


def inprocess(frames, seed=1, burst=50, log=None):
    """Feed `frames` mutants to the controller's LinkServer in bursts; the
    summary dict (its "ok": every check held)."""
    rng = random.Random("linkfuzz:%s" % seed)
    server, line, good = _server()
    r = server.reader
    out = {"frames": 0, "bursts": 0, "bytes": 0, "answered": 0, "valid_answered": 0,
           "good_frames": 0, "failures": [], "by_kind": dict.fromkeys(_NAMES, 0)}
    fed = 0
    now = 0
    seq = 0
    t0 = time.monotonic()
    while out["frames"] < frames:
        n = min(burst, frames - out["frames"])
        base = (seq + 96) & 0xFF                  # fuzz seqs: never the valid one's
        chunk = mutants(rng, n, base, out["by_kind"])
        data = b"".join(chunk)
        line.data += data
        fed += len(data)
        answers_before = len(line.out)
        frames_before = r.frames
        problems = []
        try:
            # Read the burst: each poll reads <= 256 bytes, answers <= 2.
            # A poll may leave bytes it read unfed (after two answers): polls
            # go on while one still changes something.
            bound = len(data) // (8 * len(server.rx)) + n + 4
            polls = 0
            moved = True
            while line.data or r.backlog() or moved:
                before = _progress(server, line)
                server.poll(now)
                moved = _progress(server, line) != before
                now += 10
                polls += 1
                if polls > bound:
                    problems.append("hang: %d polls for a burst of %d bytes" % (polls, len(data)))
                    break
            # A quiet line: whatever is half assembled is given up, rescanned.
            quiet = 0
            moved = False
            while r.n or r.backlog() or moved:
                now += 150
                before = _progress(server, line)
                server.poll(now)
                moved = _progress(server, line) != before
                quiet += 1
                if quiet > 64:
                    problems.append("hang: still assembling after %d quiet polls" % quiet)
                    break
            got = r.frames - frames_before
            answers = len(line.out) - answers_before
            out["answered"] += answers
            if answers != got:
                problems.append("%d good frames, %d answers" % (got, answers))
            for f in line.out[answers_before:]:
                if f[2] not in (link_codec.RESPONSE, link_codec.ERROR) or binascii.crc_hqx(
                        f[2:-2], 0xFFFF) != f[-2] | f[-1] << 8:
                    problems.append("a malformed answer %s" % f.hex())
            if r.dropped + good[0] + r.n + r.backlog() != fed:
                problems.append("bytes not accounted: dropped %d + good %d + %d != fed %d"
                                % (r.dropped, good[0], r.n + r.backlog(), fed))
            # The next valid request: answered at the first poll.
            seq = (seq + 1) & 0xFF
            req = rng.choice([{"op": "status"}, {"op": "hello", "proto": codec.PROTO_VERSION}])
            valid = raw_request(seq, req)
            line.data += valid
            fed += len(valid)
            mark = len(line.out)
            now += 10
            server.poll(now)
            ans = [f for f in line.out[mark:] if f[3] == seq]
            if len(ans) != 1 or ans[0][2] != link_codec.RESPONSE:
                problems.append("the valid %s (seq %d) got %r" % (req["op"], seq, ans))
            else:
                obj = link_codec.decode(link_codec.RESPONSE, ans[0][frame.HEADER:-2], req["op"])
                if obj.get("ok") is not True:
                    problems.append("the valid %s got %r" % (req["op"], obj))
                else:
                    out["valid_answered"] += 1
        except Exception as e:                    # a crash: what the board would reset for
            problems.append("crash: %s: %s" % (type(e).__name__, e))
            server, line, good = _server()
            r = server.reader
            fed = 0
        for m in chunk:
            out["bytes"] += len(m)
        out["frames"] += n
        out["bursts"] += 1
        if problems:
            out["failures"].append({"burst": out["bursts"], "problems": problems,
                                    "frames": [m.hex() for m in chunk][:n]})
            if len(out["failures"]) > 20:
                break
        if log and out["bursts"] % 2000 == 0:
            log("%d frames, %d failures, %.0f s" % (out["frames"], len(out["failures"]),
                                                    time.monotonic() - t0))
    out["good_frames"] = r.frames
    out["link"] = {"requests": server.requests, "errors": server.errors,
                   "retries": server.retries, "garbage": r.dropped, "bad_crc": r.bad_crc}
    out["wall_s"] = round(time.monotonic() - t0, 1)
    out["ok"] = not out["failures"] and out["valid_answered"] == out["bursts"]
    return out


# -- the live link ---------------------------------------------------------------


def live_burst(link, rng, n):
    """n mutants on a live LinkClient's line, then a status request (raises
    LinkError if it is not answered). Returns the status answer."""
    link.send_raw(b"".join(mutants(rng, n, link.seq + 128)))
    return link.request("status")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host_tools.qa.linkfuzz",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=1000000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    log = None if args.json else (lambda s: print(s, flush=True))
    out = inprocess(args.frames, args.seed, log=log)
    if args.json:
        print(json.dumps(out))
    else:
        print("linkfuzz: %(frames)d frames (%(bytes)d bytes) in %(bursts)d bursts; "
              "%(good_frames)d good frames, link %(link)s; the valid request answered "
              "%(valid_answered)d times; %(wall_s)s s" % out)
        for f in out["failures"][:5]:
            print("failure: %s" % f["problems"])
        print("PASS" if out["ok"] else "FAIL")
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
