"""The machine's cycle and its faults: one explicit state machine
(table.py) over the drivers, with the wall builder (builder.py) as the part
that can run in the background while a hand is played (double tile sets)."""
