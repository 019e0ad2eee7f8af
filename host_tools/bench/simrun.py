"""The firmware on the virtual table for the bench: boot it, and give up
at once when the MicroPython process dies (a MemoryError at boot in a small
heap) instead of waiting out a link timeout."""

import contextlib
import threading

from host_tools.link.client import LinkClient, LinkError
from host_tools.sim.launcher import SimTable

BOOT_WALL_S = 10.0          # wall-clock guard for the first hello
WATCH_S = 0.05              # how often the watcher looks at the process


def firmware_dead(sim):
    """The firmware's process ended, and not for a power cut the virtual
    table is coming back from (`halt_reason` stands from the cut to the
    next boot's HELLO: the launcher starts the firmware again)."""
    ended = sim.proc is not None and sim.proc.poll() is not None
    return (ended and sim.table.halt_reason is None) or not sim.alive


@contextlib.contextmanager
def watched(sim, link):
    """Close `link` (every wait on it raises LinkError "closed") as soon as
    the firmware process ends."""
    stop = threading.Event()

    def watch():
        while not stop.wait(WATCH_S):
            if firmware_dead(sim):
                link.close()
                return
    t = threading.Thread(target=watch, name="bench-watch", daemon=True)
    t.start()
    try:
        yield link
    finally:
        stop.set()
        t.join()


@contextlib.contextmanager
def running(seed=0, heap=None, realtime=False, setup=None, request_timeout=1.0, form="image"):
    """(sim, link) of a booted table: the firmware answered hello. Raises
    LinkError when it did not (died, or no answer in BOOT_WALL_S).
    `setup(table)` runs before the firmware starts (players, instruments);
    `form`: how the firmware runs (SimTable: frozen in the twin by default)."""
    sim = SimTable(seed=seed, heap=heap, realtime=realtime, form=form)
    if setup is not None:
        setup(sim.table)
    with sim:
        with LinkClient(sim.link_path, timeout=request_timeout) as link:
            with watched(sim, link):
                link.hello(timeout=BOOT_WALL_S / 2)
                yield sim, link


def passes(fn, seed, heap, setup=None, form="image"):
    """fn(sim, link) -> bool on a table with that heap; False when the
    firmware does not boot or the link fails."""
    try:
        with running(seed=seed, heap=heap, setup=setup, form=form) as (sim, link):
            return bool(fn(sim, link))
    except LinkError:
        return False
