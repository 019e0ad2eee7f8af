"""Following a hand allocates nothing while the wall does not change: the
reads of every side, under heap_lock (MicroPython only). A change allocates
only the event it publishes (the dict of the `hand` event)."""

import micropython

from firmware.fakes.follow import opened


def test_reading_an_unchanged_wall_allocates_nothing():
    top = opened()
    before = len(top.states())
    micropython.heap_lock()
    try:
        top.read_rounds(5)
    finally:
        micropython.heap_unlock()
    assert len(top.states()) == before
    assert top.reader.requests > 20


def test_a_tile_seen_missing_once_allocates_nothing():
    top = opened()
    wall = top.shadow.wall
    top.take(wall.geo.slot_of_pos[wall.head_pos()])
    micropython.heap_lock()
    try:
        top.read_rounds(1)               # missing once: nothing published yet
    finally:
        micropython.heap_unlock()
    top.read_rounds(1)
    assert top.states()[-1]["op"] == "draw"
