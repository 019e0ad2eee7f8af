"""English texts: the default language. Keys are grouped by prefix:
`state.` table states, `label.` field labels, `err.` one-line errors,
`msg.` other messages."""

TEXTS = {
    "state.boot": "booting",
    "state.idle": "idle",
    "state.building": "building the walls",
    "state.lifting": "lifting the walls",
    "state.dealer": "choosing the dealer",
    "state.rolling": "rolling the dice",
    "state.in_hand": "hand in play",
    "state.fault": "stopped by a fault",
}
