"""Pure helpers of the bench: order statistics and the dice's chi-square.
No I/O; host_tools/tests/test_bench_helpers.py checks them."""

from host_tools.cli.ops import dice_stats


def percentile(values, q):
    """The q-th percentile (0..100) of `values`, interpolated linearly
    between the two nearest ranks (numpy's default). ValueError if empty."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be 0..100, not %r" % (q,))
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def median(values):
    return percentile(values, 50)


def chi2_faces(counts):
    """(chi-square, p) of six face counts against a fair die: 5 degrees of
    freedom, as mjctl dice-test computes them (cli/ops.py), the counts
    checked first."""
    if len(counts) != 6:
        raise ValueError("six faces, not %d" % len(counts))
    if sum(counts) <= 0:
        raise ValueError("no rolls")
    return dice_stats(counts)


def _grid(lo, hi, passes, step):
    """The values lo, lo+step, ... <= hi as indices 0..n, and ok(i): passes
    at index i, each try recorded in `tried` as (value, passed)."""
    if step <= 0 or hi < lo:
        raise ValueError("bad range %r..%r step %r" % (lo, hi, step))
    tried = []

    def ok(i):
        v = lo + i * step
        r = bool(passes(v))
        tried.append((v, r))
        return r
    return (hi - lo) // step, tried, ok


def bisect_min(lo, hi, passes, step=1):
    """The smallest v in lo, lo+step, ..., <= hi with passes(v) true,
    assuming passes is monotone (false below some value, true from it on).
    Returns (v or None when hi itself fails, [(v, passed), ...] in the order
    tried). hi is tried first, then lo, then the halves."""
    n, tried, ok = _grid(lo, hi, passes, step)   # indices 0..n; value = lo + i * step
    if not ok(n):
        return None, tried
    if n == 0 or ok(0):
        return lo, tried
    return lo + _halve(ok, 0, n) * step, tried


def gallop_min(lo, hi, passes, step=1):
    """Like bisect_min, for an answer expected just above lo: tries lo,
    lo+step, lo+2*step, lo+4*step, ... (capped at hi) until one passes, then
    bisects between the last failure and it. Same return value."""
    n, tried, ok = _grid(lo, hi, passes, step)
    bad, i, jump = None, 0, 1
    while not ok(i):
        if i == n:
            return None, tried
        bad, i, jump = i, min(n, i + jump), jump * 2
    if bad is None:
        return lo, tried
    return lo + _halve(ok, bad, i) * step, tried


def _halve(ok, bad, good):
    """The least index that passes, ok(bad) false and ok(good) true."""
    while good - bad > 1:
        mid = (bad + good) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good
