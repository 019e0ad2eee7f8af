# Frozen into the image so that no boot.py on the board's filesystem runs
# (MicroPython writes one when it formats the filesystem; anyone with the
# USB cable could write another). The ESP32 port runs boot.py, then
# main.py, through pyexec_file_if_exists(), which runs a frozen module of
# that name before it looks for a file (MicroPython 1.28,
# shared/runtime/pyexec.c; ports/esp32/main.c). There is nothing to do at
# this stage: the native USB, which carries the link, starts only after
# boot.py (mp_usbd_init() in ports/esp32/main.c), so no host can send a
# byte yet, and main.py turns Ctrl-C off before anything reads the console.
