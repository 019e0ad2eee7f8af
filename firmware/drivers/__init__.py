"""One module per device kind. Each driver gets its HAL objects and tunables
at construction and is stepped with `poll(now)` once per control tick; a
driver that detects a fault sets `fault` (a code of firmware/faults.py) and
`detail`, and the controller stops every motor."""
