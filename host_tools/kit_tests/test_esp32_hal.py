"""The esp32 HAL on the esp32 port, in QEMU: the board's QEMU image stops
at the REPL (no qemu.json on its flash), and mpremote runs
esp32_hal_check.py there: every pin of the shipped map claimed as the
drivers claim it, each output off, on and off, the inputs read, the
UARTs opened, the watchdog fed, the DRBG read, the flash written and read,
without a fault. What QEMU cannot show (the PWM's level: LEDC reads as
zero; UART2; Wi-Fi) is in docs/hardware.md."""

import json
import subprocess
import sys
from pathlib import Path

from host_tools.image.mpenv import ROOT
from host_tools.sim.qemu_machine import QemuBoard

CHECK = Path(__file__).with_name("esp32_hal_check.py")


def test_the_esp32_hal_drives_every_pin_of_the_map_in_qemu(shipped_files):
    with QemuBoard(shipped_files) as board:
        r = subprocess.run([sys.executable, "-m", "mpremote", "connect", board.port,
                            "run", str(CHECK)], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, (r.stdout, r.stderr, board.log()[-2000:])
    line = [l for l in r.stdout.splitlines() if l.startswith("HAL_CHECK ")]
    assert line, r.stdout
    seen = json.loads(line[0].split(" ", 1)[1])
    pins = json.loads((ROOT / "firmware" / "config.json").read_text())["pins"]
    outputs = ([pins["plate_motor"], pins["buzzer"]] + pins["lane_feed"] + pins["lift_up"]
               + pins["lift_down"])
    inputs = ([pins["plate_rotation"]] + pins["lane_count"] + pins["lift_top"]
              + pins["lift_bottom"] + pins["keys"])
    assert sorted(int(p) for p in seen["outputs"]) == sorted(outputs)
    assert sorted(int(p) for p in seen["inputs"]) == sorted(inputs)
    for pin, o in seen["outputs"].items():
        # A GPIO reads back what was written; QEMU's S3 reads 0 from every
        # pin of the second bank (32-48), and LEDC's PWM as 0 (docs/hardware.md).
        if not o["pwm"] and int(pin) < 32:
            assert o["seen"] == [0, 1, 0], (pin, o)
    assert all(level in (0, 1) and edges == 0 for level, edges in seen["inputs"].values())
    assert seen["tripped"] == -1
    assert seen["entropy"] == "no_rf"          # the kit's image has no Wi-Fi
    assert seen["rand"] == [32, True, True]
    assert seen["flag"] == [True, False] and seen["secret"] is True
    # Both UARTs open with the rings the drivers ask for, written and read.
    assert seen["uarts"] == {"1": "ok 0", "2": "ok 0"}, seen["uarts"]
