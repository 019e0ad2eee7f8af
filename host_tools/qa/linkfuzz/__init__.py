"""Fuzzing the link: mutated, truncated, oversized and
random frames, counted, in process and on the live link.

    python -m host_tools.qa.linkfuzz [--frames N] [--seed S] [--json]

    mutants.py      `mutants(rng, n, base)`: the frames a damaged line or a
                    broken host could send (the kinds are listed in KINDS)
    server_fuzz.py  `inprocess(frames, seed)`: fed in bursts to the
                    controller's own `LinkServer` on CPython, every burst
                    checked (no crash, no hang, the next valid request
                    answered, every byte counted)
    live.py         `live_burst(link, rng, n)`: n of them on a live link
                    (a LinkClient), then a `status` that must be answered
                    (hw_tests/test_link.py, the soak between hands)
    cli.py          the command line
"""

from host_tools.qa.linkfuzz.cli import main
from host_tools.qa.linkfuzz.live import live_burst
from host_tools.qa.linkfuzz.mutants import KINDS, OPS, mutants, raw_request
from host_tools.qa.linkfuzz.server_fuzz import inprocess

__all__ = ["KINDS", "OPS", "inprocess", "live_burst", "main", "mutants", "raw_request"]
