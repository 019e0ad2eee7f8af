"""`mjctl --qemu` as a technician types it, from the project root: what
`--sim` does, with the firmware on the esp32 port in QEMU (status, a
cycle, serve with its link for a second mjctl). A whole hand on the
esp32 port is make test-qemu-short's (hw_tests/test_hand.py --qemu)."""

import json
import signal
import subprocess

from host_tools.image.mpenv import ROOT

MJCTL = [str(ROOT / ".venv" / "bin" / "mjctl")]
ESP32 = {"bits": 32, "chip": "ESP32S3", "entropy": "seeded", "frozen": True,
         "micropython": "1.28.0", "port": "esp32"}


def mjctl(*args, timeout=300):
    p = subprocess.run(MJCTL + list(args), cwd=ROOT, capture_output=True, text=True,
                       timeout=timeout)
    assert "Traceback" not in p.stderr, p.stderr
    return p


def test_status_and_a_cycle_with_the_firmware_in_qemu():
    p = mjctl("--qemu", "status", "--json")
    assert p.returncode == 0, p.stderr
    st = json.loads(p.stdout)
    assert st["state"] == "idle" and st["runtime"] == ESP32, st
    p = mjctl("--qemu", "--seed", "3", "cycle", "--json")
    assert p.returncode == 0, (p.stdout, p.stderr)
    cycle = json.loads(p.stdout)
    assert cycle["ok"] and cycle["runtime"] == ESP32, cycle
    assert cycle["faults"] == [], cycle


def test_serve_in_qemu_gives_a_link_that_status_answers_and_stops_on_ctrl_c():
    serve = subprocess.Popen(MJCTL + ["--qemu", "--seed", "2", "serve", "--json"], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        link = json.loads(serve.stdout.readline())["link"]
        p = mjctl("--port", link, "status", "--json", timeout=60)
        assert p.returncode == 0, p.stderr
        st = json.loads(p.stdout)
        assert st["state"] == "idle" and st["runtime"] == ESP32, st
    finally:
        serve.send_signal(signal.SIGINT)
        rc = serve.wait(timeout=30)
    assert rc == 0 and "Traceback" not in serve.stderr.read()
