"""The event-by-event API and the events of play allocate nothing
(MicroPython only: run under heap_lock, any allocation raises MemoryError)."""

import micropython

from engine_core import tiles
from engine_core.hand import DRAW, Hand
from engine_core.rulesets import load
from engine_core.wall import HEAD, TAIL, Geometry, Wall
from engine_core.tests.walls import arrange


def test_wall_taken_and_put_back_allocate_nothing():
    geo = Geometry(18, 1, 9)
    wall = Wall(geo, bytearray(144))
    slots = bytearray(geo.slot_of_pos)       # every slot, in draw order
    kinds = bytearray(144)
    micropython.heap_lock()
    try:
        for j in range(72):
            kinds[j] = wall.taken(slots[j])               # head side
            kinds[143 - j] = wall.taken(wall.geo.slot_of_pos[wall.tail_pos()])
        back = wall.put_back(slots[70])
        again = wall.taken(slots[70])
    finally:
        micropython.heap_unlock()
    assert wall.count == 0
    assert kinds[0] == HEAD and kinds[143] == TAIL and back > 0 and again > 0


def _dealt():
    """A fuzhou144 hand, dealer 2, dice 6, just dealt; and its tile ids."""
    rules = load("fuzhou144")
    ids = bytearray(tiles.tile_id(c) for c in arrange(rules, 2, 6, {}))
    hand = Hand(rules, 2, 6, ids)
    hand.deal()
    return hand, ids


def test_draws_and_kongs_in_play_allocate_nothing():
    hand, _ids = _dealt()
    hand.replace_flowers()
    hand.reveal_gold()
    seat = 3
    n = 0
    micropython.heap_lock()
    try:
        while hand.phase != DRAW and n < 200:
            if n % 9 == 4:
                hand.kong(seat, n % 2 == 0)
            hand.draw(seat)
            seat = (seat + 1) & 3
            n += 1
        marker = hand.marker_stack()
        d = hand.drawable
    finally:
        micropython.heap_unlock()
    assert hand.phase == DRAW and d <= 0 and marker >= -1 and n > 10


def test_a_hand_reset_for_the_next_hand_allocates_nothing():
    hand, ids = _dealt()
    micropython.heap_lock()
    try:
        hand.reset(1, 9, ids)
    finally:
        micropython.heap_unlock()
    assert hand.phase == 0 and hand.wall.count == 144 and hand.dealer == 1
    assert hand.wall.geo.skip == 9
