"""The practice board as docs/deploy.md tells it, and keys a typo cannot
lose: mpremote's soft reset (`mpremote connect PORT ls`) and `mpremote
reset` restart the virtual board's MicroPython from its flash as on a
board; `python -m host_tools.sim.vboard` run from a folder with its default
flash folder, deployed to with the default per-table key, boots with no
fault; a deploy never replaces the board's key without --new-key."""

import hashlib
import json
import os
import signal
import subprocess
import sys

import pytest

from host_tools.image import deploy, tablekey
from host_tools.sim.vboard import VirtualBoard, board_uid

MPREMOTE = os.path.join(os.path.dirname(sys.executable), "mpremote")
QUIET = dict(reset=False, log=lambda *a: None)


def _mpremote(port, *args):
    return subprocess.run([MPREMOTE, "connect", port] + list(args), capture_output=True,
                          text=True, timeout=30)


def test_mpremote_soft_and_hard_resets_restart_the_virtual_board(tmp_path):
    with VirtualBoard(tmp_path / "flash") as vb:
        (tmp_path / "flash" / "note.txt").write_text("kept")
        for n in (1, 2):                      # each connect soft-resets: the board stays
            r = _mpremote(vb.port, "ls")
            assert r.returncode == 0 and "note.txt" in r.stdout, r.stderr
            assert vb.resets == n
        r = _mpremote(vb.port, "exec", "x = 5")
        r = _mpremote(vb.port, "resume", "exec", "print(x)")    # no reset: the REPL's state
        assert r.stdout.strip() == "5", r.stderr
        r = _mpremote(vb.port, "reset")
        assert r.returncode == 0, r.stderr
        r = _mpremote(vb.port, "resume", "exec", "print('x' in dir())")
        assert r.returncode == 0 and r.stdout.strip() == "False", (r.stdout, r.stderr)
        r = _mpremote(vb.port, "exec", "import machine, binascii;"
                      " print(binascii.hexlify(machine.unique_id()).decode())")
        assert r.stdout.strip() == board_uid(vb.folder).hex() and len(vb.uid) == 6
        assert vb.proc.poll() is None


def test_keys_per_table_and_no_silent_replacement(tmp_path):
    keys = tmp_path / "keys"
    stage = tmp_path / "stage"
    with VirtualBoard(tmp_path / "flash") as vb:
        board_key = lambda: open(vb.path("service.key"), "rb").read()    # noqa: E731
        lines = []
        first = deploy.deploy(vb.port, reset=False, log=lines.append, out=stage, keys_dir=keys)
        own = keys / ("table-%s.key" % vb.uid.hex())
        assert first["key"]["file"] == str(own) and first["key"]["action"] == "made"
        fp = hashlib.sha256(own.read_bytes()).hexdigest()[:16]
        assert first["key"]["fingerprint"] == fp and board_key() == own.read_bytes()
        assert any(str(own) in line and fp in line for line in lines), lines
        # Another table's key: stopped before anything is copied.
        other = tmp_path / "other.key"
        other.write_bytes(os.urandom(32))
        (tmp_path / "flash" / "firmware" / "drivers" / "motion.mpy").write_bytes(b"x")
        with pytest.raises(deploy.DeployError) as e:
            deploy.deploy(vb.port, key_path=other, out=stage, **QUIET)
        assert "another key" in str(e.value) and fp in str(e.value) and "NEW_KEY=1" in str(e.value)
        assert board_key() == own.read_bytes()
        assert (tmp_path / "flash" / "firmware" / "drivers" / "motion.mpy").read_bytes() == b"x"
        # A mistyped path: no key is made, the board's stays.
        typo = keys / "tabel-7.key"
        with pytest.raises(deploy.DeployError) as e:
            deploy.deploy(vb.port, key_path=typo, out=stage, **QUIET)
        assert "no key file" in str(e.value) and not typo.exists()
        assert board_key() == own.read_bytes()
        # A folder, a short file: one line each.
        for bad, words in ((keys, "is a folder"), (tmp_path / "short.key", "bytes")):
            if bad.name == "short.key":
                bad.write_bytes(b"abc")
            with pytest.raises(deploy.DeployError) as e:
                deploy.deploy(vb.port, key_path=bad, out=stage, **QUIET)
            assert words in str(e.value) and "\n" not in str(e.value)
        # --new-key replaces it, and says whose it replaced.
        res = deploy.deploy(vb.port, key_path=other, out=stage, new_key=True, **QUIET)
        assert res["key"]["action"] == "replaced" and board_key() == other.read_bytes()
        assert res["copied"] == ["firmware/drivers/motion.mpy", "service.key"]
        again = deploy.deploy(vb.port, key_path=other, out=stage, **QUIET)
        assert again["key"]["action"] == "kept" and again["copied"] == []
        # The command line: one line, exit 2, no traceback.
        r = subprocess.run([sys.executable, "-m", "host_tools.image.deploy", "--port", vb.port,
                            "--key", str(typo), "--no-reset", "--out", str(stage)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert r.stderr.startswith("deploy: no key file") and not typo.exists()


def test_a_newcomer_runs_the_vboard_from_its_own_folder_deploys_and_resets(tmp_path):
    """`make vboard` (the default flash folder, relative, from where it was
    started), `make deploy PORT=...` with no KEY (the per-table key made
    under keys/), an `mpremote connect PORT ls` between, then Enter: the
    table boots with the deployed build and no fault, the printed
    self-test line names the key that opens a session."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    vb = subprocess.Popen([sys.executable, "-m", "host_tools.sim.vboard"], cwd=tmp_path, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    try:
        head = vb.stdout.readline()
        assert "flash in build/vboard" in head, head
        port = vb.stdout.readline().split("PORT=")[1].strip()
        d = subprocess.run([sys.executable, "-m", "host_tools.image.deploy", "--port", port,
                            "--out", str(tmp_path / "stage")], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
        assert d.returncode == 0, d.stderr
        (key,) = (tmp_path / "keys").iterdir()
        assert key.name.startswith("table-") and "fingerprint" in d.stdout and key.name in d.stdout
        r = _mpremote(port, "ls")                    # after the deploy's own `mpremote reset`
        assert r.returncode == 0 and "manifest.txt" in r.stdout, r.stderr
        vb.stdin.write("\n")
        vb.stdin.flush()
        link = vb.stdout.readline().split("link: ")[1].strip()
        try_line = vb.stdout.readline()
        assert "keys/" + key.name in try_line, (try_line, vb.poll() and vb.stderr.read())

        def mjctl(*args):
            return subprocess.run([sys.executable, "-m", "host_tools.cli.mjctl", "--port", link]
                                  + list(args), cwd=tmp_path, capture_output=True, text=True,
                                  timeout=60)
        st = mjctl("status", "--json")
        assert st.returncode == 0, st.stderr
        st = json.loads(st.stdout)
        assert st["fault"] is None and st["state"] == "idle" and st["build"].startswith("deploy-")
        jog = mjctl("--key", str(tmp_path / "keys" / key.name), "jog", "plate", "100", "--json")
        assert jog.returncode == 0, jog.stderr
    finally:
        vb.send_signal(signal.SIGINT)
        vb.wait(timeout=30)
    assert vb.returncode == 0, vb.stderr.read()
    assert (tmp_path / "build" / "vboard" / "manifest.txt").exists()
    assert tablekey.read(tmp_path / "keys" / key.name) == \
        (tmp_path / "build" / "vboard" / "service.key").read_bytes()
