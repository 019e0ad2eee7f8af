"""The link fuzz in process: mutants fed, in bursts, to the controller's
own `LinkServer` (firmware/link/server.py, frame.py, codec.py: the code
that runs on the board, imported on CPython, over a fake line and HAL),
and after every burst these checks:

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
"""

import binascii
import random
import time

from firmware import frame
from firmware.link import protocol
from host_tools.link import codec as link_codec
from host_tools.qa.linkfuzz.mutants import KIND_NAMES, mutants, raw_request


class FakeLine:
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


class FakeHal:
    """What the LinkServer uses of a HAL with no controller attached: the
    link's line, the clock (events' times) and random bytes (a service
    challenge)."""

    def __init__(self):
        self.link = FakeLine()
        self.rng = random.Random("linkfuzz-hal")

    def ticks_ms(self):
        return 0

    def rand(self, n):
        return bytes(self.rng.randrange(256) for _ in range(n))


class ServerUnderFuzz:
    """A fresh LinkServer on a FakeLine, with the bytes fed to it and the
    bytes of every good frame its reader assembled counted (every byte fed
    must be one of those, garbage, or still waiting)."""

    def __init__(self):
        from firmware.link.server import LinkServer
        hal = FakeHal()
        self.server = LinkServer(hal, "0.0.0", "fuzz")
        self.line = hal.link
        self.reader = self.server.reader
        self.fed = 0
        self.good_bytes = 0
        reader = self.reader
        feed = reader.feed

        def counted(*args):
            i = feed(*args)
            if reader.ready:
                self.good_bytes += frame.OVERHEAD + reader.length
            return i
        reader.feed = counted

    def send(self, data):
        self.line.data += data
        self.fed += len(data)

    def progress(self):
        """What a poll that reads a byte changes: the reader's counts and
        the frame it assembles, and the answers written."""
        r = self.reader
        return r.frames, r.dropped, r.bad_crc, r.n, r.backlog(), len(self.line.out)


class BurstChecks:
    """The server under fuzz and the virtual clock of its polls; each
    burst read to the end and checked (`feed_burst`). A crash replaces the
    server by a fresh one, as the board would reset; the clock and the
    valid requests' seq go on."""

    def __init__(self, rng):
        self.rng = rng
        self.target = ServerUnderFuzz()
        self.now = 0
        self.seq = 0                              # the last valid request's

    def feed_burst(self, chunk, out):
        """Feed the mutants of `chunk`, then a valid request; the problems
        seen (a list, empty when every check held). The answers are added
        to `out` ("answered", "valid_answered")."""
        target = self.target
        data = b"".join(chunk)
        target.send(data)
        answers_before = len(target.line.out)
        frames_before = target.reader.frames
        problems = []
        try:
            self._read_burst(len(data), len(chunk), problems)
            self._let_the_line_go_quiet(problems)
            self._check_answers(answers_before, frames_before, problems, out)
            self._check_every_byte_counted(problems)
            out["valid_answered"] += self._valid_request_answered(problems)
        except Exception as e:                    # a crash: what the board would reset for
            problems.append("crash: %s: %s" % (type(e).__name__, e))
            self.target = ServerUnderFuzz()
        return problems

    def _poll_moved(self):
        """One poll; whether it changed anything."""
        before = self.target.progress()
        self.target.server.poll(self.now)
        return self.target.progress() != before

    def _read_burst(self, size, n, problems):
        # Each poll reads <= 256 bytes, answers <= 2. A poll may leave
        # bytes it read unfed (after two answers): polls go on while one
        # still changes something.
        target = self.target
        bound = size // (8 * len(target.server.rx)) + n + 4
        polls = 0
        moved = True
        while target.line.data or target.reader.backlog() or moved:
            moved = self._poll_moved()
            self.now += 10
            polls += 1
            if polls > bound:
                problems.append("hang: %d polls for a burst of %d bytes" % (polls, size))
                break

    def _let_the_line_go_quiet(self, problems):
        # A quiet line: whatever is half assembled is given up, rescanned.
        r = self.target.reader
        quiet = 0
        moved = False
        while r.n or r.backlog() or moved:
            self.now += 150
            moved = self._poll_moved()
            quiet += 1
            if quiet > 64:
                problems.append("hang: still assembling after %d quiet polls" % quiet)
                break

    def _check_answers(self, answers_before, frames_before, problems, out):
        """Every good frame of the burst answered once (the answers added
        to out["answered"]), each answer a well-formed RESPONSE or ERROR."""
        line = self.target.line
        got = self.target.reader.frames - frames_before
        answers = len(line.out) - answers_before
        out["answered"] += answers
        if answers != got:
            problems.append("%d good frames, %d answers" % (got, answers))
        for f in line.out[answers_before:]:
            if f[2] not in (link_codec.RESPONSE, link_codec.ERROR) or binascii.crc_hqx(
                    f[2:-2], 0xFFFF) != f[-2] | f[-1] << 8:
                problems.append("a malformed answer %s" % f.hex())

    def _check_every_byte_counted(self, problems):
        t = self.target
        r = t.reader
        if r.dropped + t.good_bytes + r.n + r.backlog() != t.fed:
            problems.append("bytes not accounted: dropped %d + good %d + %d != fed %d"
                            % (r.dropped, t.good_bytes, r.n + r.backlog(), t.fed))

    def _valid_request_answered(self, problems):
        """The next valid request, answered at the first poll: 1 when it
        was, with `ok`, else 0 and the problem."""
        self.seq = (self.seq + 1) & 0xFF
        seq = self.seq
        req = self.rng.choice([{"op": "status"}, {"op": "hello", "proto": protocol.PROTO_VERSION}])
        line = self.target.line
        self.target.send(raw_request(seq, req))
        mark = len(line.out)
        self.now += 10
        self.target.server.poll(self.now)
        ans = [f for f in line.out[mark:] if f[3] == seq]
        if len(ans) != 1 or ans[0][2] != link_codec.RESPONSE:
            problems.append("the valid %s (seq %d) got %r" % (req["op"], seq, ans))
            return 0
        obj = link_codec.decode(link_codec.RESPONSE, ans[0][frame.HEADER:-2], req["op"])
        if obj.get("ok") is not True:
            problems.append("the valid %s got %r" % (req["op"], obj))
            return 0
        return 1


def inprocess(frames, seed=1, burst=50, log=None):
    """Feed `frames` mutants to the controller's LinkServer in bursts; the
    summary dict (its "ok": every check held)."""
    rng = random.Random("linkfuzz:%s" % seed)
    checks = BurstChecks(rng)
    out = {"frames": 0, "bursts": 0, "bytes": 0, "answered": 0, "valid_answered": 0,
           "good_frames": 0, "failures": [], "by_kind": dict.fromkeys(KIND_NAMES, 0)}
    t0 = time.monotonic()
    while out["frames"] < frames:
        n = min(burst, frames - out["frames"])
        base = (checks.seq + 96) & 0xFF           # fuzz seqs: never the valid one's
        chunk = mutants(rng, n, base, out["by_kind"])
        problems = checks.feed_burst(chunk, out)
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
    server = checks.target.server
    r = checks.target.reader
    out["good_frames"] = r.frames
    out["link"] = {"requests": server.requests, "errors": server.errors,
                   "retries": server.retries, "garbage": r.dropped, "bad_crc": r.bad_crc}
    out["wall_s"] = round(time.monotonic() - t0, 1)
    out["ok"] = not out["failures"] and out["valid_answered"] == out["bursts"]
    return out
