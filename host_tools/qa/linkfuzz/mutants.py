"""The damaged frames the link fuzz sends: valid requests with bits
flipped, cut short, their length field changed, oversized (a header over
the bound, or a whole frame longer than the controller's 160-byte request
buffer), a good CRC around random bytes, a good CRC around JSON that is
almost a request (a wrong type, an unknown field or op, nesting, long
strings, not an object), frames of another kind, a sync pair and random
bytes, plain noise (the kinds are listed in KINDS). Their seqs are
base..base+63 and no flip touches a seq, so an answer to one is never
taken for the answer to the valid request that follows.
"""

import json

from firmware import frame
from firmware.link import protocol
from host_tools.link import codec as link_codec

# What a mutant is, by kind: (name, weight).
KINDS = (("flipped", 3), ("truncated", 2), ("length", 2), ("oversized", 1),
         ("random_payload", 1), ("bad_json", 3), ("other_kind", 1), ("sync_noise", 1),
         ("noise", 1))
KIND_NAMES = [k for k, _ in KINDS]
KIND_WEIGHTS = [w for _, w in KINDS]
OPS = [{"op": "status"}, {"op": "hello", "proto": protocol.PROTO_VERSION},
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
    return json.dumps({"op": "hello", "proto": rng.choice([0, -1, protocol.PROTO_VERSION + 1,
                                                           "4", 4.0, None])})


def mutants(rng, n, base, counts=None):
    """n damaged frames (bytes), each of a kind of KINDS; seqs base..base+63.
    `counts`: a dict kind -> number made, added to."""
    out = []
    for kind in rng.choices(KIND_NAMES, KIND_WEIGHTS, k=n):
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
        if len(good) > 3 and good[:2] == b"\xa5\x5a" and good[2] == link_codec.REQUEST:
            good[3] = seq     # a request's header made by chance takes a seq of the run too
        out.append(bytes(good))
    return out
