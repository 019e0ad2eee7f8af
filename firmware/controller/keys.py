"""What the seat keys mean now: a press or a gesture read in each state of
the cycle (docs/hand.md; the driver that tells them apart is
drivers/panel.py's Keys).

    dealer       the dealer's press rolls the dice; another seat's is refused
    in_hand      HOLD: "I win"; SINGLE, DOUBLE: an exposed or a concealed
                 kong; the dealer's press rolls for the gold when the rules
                 turn it up by the dice; a hand with nothing left to draw
                 ends in a draw (和局)
    refuse       a key pressed when it means nothing: a beep and an event

The controller's tick calls these (TableController.step); what they
change is the controller's own (its commands, `gold_rolling` and
`dice_unshown`): the state changes stay the cycle's (table.py).
"""

from engine_core.hand import DRAW
from firmware.drivers import panel


def dealer_rolls(ctl, now):
    """The dealer pressed (the table rolls the dice): True; another seat's
    press is refused."""
    keys = ctl.devices.keys
    dealer = ctl.dealership.dealer
    for seat in range(4):
        if keys.take_press(seat):
            if seat == dealer:
                return True
            refuse(ctl, now, seat, "only the dealer rolls")
    return False


def in_hand(ctl, now):
    """The keys during a hand, and its end when the players' gestures or
    the walls say so."""
    d = ctl.devices
    f = ctl.follower
    dealer = ctl.dealership.dealer
    if ctl.dice_unshown:                  # the gold roll, written since the last tick
        ctl.dice_unshown = False
        d.display.show_dice(now, d.dice.a, d.dice.b, False)
        ctl.emit("dice", {"a": d.dice.a, "b": d.dice.b, "dealer": dealer, "gold": True})
    if ctl.gold_rolling and d.dice.done(now):
        ctl.gold_rolling = False
        f.gold_dice(now, d.dice.a, d.dice.b)     # into the hand's record: shown next tick
        ctl.dice_unshown = True
    for seat in range(4):
        pressed = d.keys.take_press(seat)
        g = d.keys.take_gesture(seat)      # presses are read as gestures here
        if ctl.gold_rolling:
            if g and seat != dealer:       # the dealer's own press makes one too
                refuse(ctl, now, seat, "the dice are rolling for the gold")
            continue
        if f.wants_gold_dice():
            if pressed and seat == dealer:
                ctl.gold_rolling = True    # the gold by the dice (§7)
                d.dice.start(now)
                d.display.show_dice(now, 0, 0, True)
            elif g:
                refuse(ctl, now, seat, "the dealer rolls for the gold")
            continue
        if g == panel.HOLD:
            ctl.hand_end(now, seat)        # "I win"
            return
        if g == panel.SINGLE or g == panel.DOUBLE:
            why = f.kong(now, seat, g == panel.DOUBLE)
            if why:
                refuse(ctl, now, seat, why)
    if f.active and f.phase == DRAW:       # nothing left to draw: 和局
        ctl.hand_end(now, None)


def refuse(ctl, now, seat, reason):
    """A key pressed when it means nothing: a beep and an event, no change."""
    ctl.devices.buzzer.beep(now, 150)
    ctl.emit("refused", {"seat": seat, "reason": reason})
