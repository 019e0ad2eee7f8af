"""The table controller's firmware (MicroPython). Layers, each calling only
down: main -> controller -> drivers -> hal; link and config beside them."""
