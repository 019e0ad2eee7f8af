"""`make deploy` against a virtual board (host_tools/sim/vboard.py): a
`micropython` process on a pty, driven by mpremote through its raw REPL,
its flash a folder. Then the deployed folder boots on the virtual table
(SimTable(code_dir=...)) and the link answers, or refuses to move when a
file is not what was deployed."""

import os
import shutil
import stat

import pytest

from host_tools.image import deploy
from host_tools.link.client import LinkClient, LinkError
from host_tools.sim.vboard import VirtualBoard
from host_tools.sim.launcher import SimTable

FIRMWARE_CORRUPT = 42


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A board after its first deploy: (VirtualBoard, first result, key path)."""
    tmp = tmp_path_factory.mktemp("deploy")
    key = tmp / "keys" / "table-1.key"
    stage = tmp / "stage"
    vb = VirtualBoard(tmp / "flash").start()
    try:
        first = deploy.deploy(vb.port, key_path=key, reset=False, log=lambda *a: None, out=stage)
        yield vb, first, key, stage
    finally:
        vb.stop()


def _boot(folder):
    sim = SimTable(seed=2, code_dir=folder).start()
    link = LinkClient(sim.link_path)
    return sim, link


def test_the_first_deploy_copies_every_file_and_provisions_the_board(board):
    vb, first, key, _ = board
    manifest = open(vb.path("manifest.txt")).read().splitlines()
    listed = {line.split()[1]: line.split()[0] for line in manifest[1:]}
    assert manifest[0] == "# build " + first["build"]
    assert len(listed) == first["files"] and "main.py" in listed
    assert "firmware/controller/follower.mpy" in listed and "engine_core/hand.mpy" in listed
    assert "lib/hmac.mpy" in listed           # micropython-lib's, which a stock board lacks
    assert not any(p.startswith(("host_tools", "hw_tests", "firmware/image")) or "/tests/" in p
                   for p in listed)
    for path, digest in listed.items():                      # what the board holds
        assert deploy.sha256_file(vb.path(path)) == digest, path
    assert set(first["copied"]) == set(listed) | {"config.json", "tags.txt", "service.key"}
    # The key: made on the host, owner-only, and the same bytes on the board.
    assert first["key_made"] and len(key.read_bytes()) == deploy.KEY_BYTES
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600
    assert open(vb.path("service.key"), "rb").read() == key.read_bytes()


def test_a_second_deploy_copies_nothing_and_a_changed_file_only_itself(board):
    vb, first, key, stage = board
    again = deploy.deploy(vb.port, key_path=key, reset=False, log=lambda *a: None, out=stage)
    assert again["copied"] == [] and again["removed"] == [] and not again["key_made"]
    assert again["build"] == first["build"]                   # same code, same id
    path = vb.path("firmware/drivers/motion.mpy")
    good = open(path, "rb").read()
    with open(path, "ab") as f:
        f.write(b"\x00")
    stray = vb.path("firmware/drivers/old_driver.mpy")        # a module the build dropped
    with open(stray, "wb") as f:
        f.write(b"M\x06")
    fixed = deploy.deploy(vb.port, key_path=key, reset=False, log=lambda *a: None, out=stage)
    assert fixed["copied"] == ["firmware/drivers/motion.mpy"]
    assert fixed["removed"] == ["firmware/drivers/old_driver.mpy"]
    assert open(path, "rb").read() == good and not os.path.exists(stray)


def test_the_deployed_board_boots_and_answers_with_its_build(board):
    vb, first, _, _ = board
    sim, link = _boot(vb.folder)
    try:
        info = link.hello()
        assert info["build"] == first["build"] and info["table"] == "sim"
        st = link.request("status")
        assert st["state"] == "idle" and st["fault"] is None
    finally:
        link.close()
        sim.stop()


@pytest.mark.parametrize("damage, words", [
    ("change", "has changed"), ("remove", "is missing"), ("stray", "not in the manifest")])
def test_a_file_that_is_not_what_was_deployed_stops_the_table(board, tmp_path, damage, words):
    vb, _, _, _ = board
    copy = tmp_path / "flash"
    shutil.copytree(vb.folder, copy)           # damage a copy: the fixture stays good
    target = copy / "firmware" / "controller" / "builder.mpy"
    if damage == "change":
        target.write_bytes(target.read_bytes()[:-1] + b"\x00")
    elif damage == "remove":
        target.unlink()
    else:
        target = copy / "firmware" / "controller" / "builder.py"
        target.write_text("print('patched')\n")
    sim, link = _boot(copy)
    try:
        link.hello()
        st = link.request("status")
        assert st["state"] == "fault" and st["fault"]["code"] == FIRMWARE_CORRUPT, st
        reason = st["fault"]["detail"]["reason"]
        assert "firmware/controller/builder" in reason and words in reason, reason
        with pytest.raises(LinkError) as e:
            link.request("start")
        assert e.value.code == "firmware_corrupt"
        # Two virtual seconds on, still nothing was ever driven.
        t0 = st["uptime"]
        while link.request("status")["uptime"] < t0 + 2000:
            pass
        assert [entry for entry in sim.table.log if entry[1] == "out"] == []
        assert all(v == 0 for v in sim.table.outputs.values()), sim.table.outputs
    finally:
        link.close()
        sim.stop()


def test_the_command_line_deploys_and_reports_in_json(board, tmp_path):
    import json
    import subprocess
    import sys
    vb, first, key, stage = board
    out = subprocess.run([sys.executable, "-m", "host_tools.image.deploy", "--port", vb.port,
                          "--key", str(key), "--no-reset", "--json", "--out", str(stage)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["build"] == first["build"] and res["copied"] == [] and not res["key_made"]
    bad = subprocess.run([sys.executable, "-m", "host_tools.image.deploy", "--port",
                          str(tmp_path / "no-such-port"), "--no-reset", "--out",
                          str(tmp_path / "stage")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "deploy:" in bad.stderr and "Traceback" not in bad.stderr


def test_a_newcomer_deploys_to_the_virtual_board_and_runs_a_selftest(tmp_path):
    """docs/deploy.md, "Try it without a board": the virtual board deployed
    and powered on by `python -m host_tools.sim.vboard`, then mjctl over its
    link with the key the deploy made: the build, a self-test that finds
    the injected fault, and that fault's fix text."""
    import json
    import signal
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    key = tmp_path / "vboard.key"
    p = subprocess.Popen([sys.executable, "-m", "host_tools.sim.vboard", "--folder",
                          str(tmp_path / "flash"), "--deploy", str(key),
                          "--fault", "lift_stuck:2"], cwd=root,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        link = json.loads(p.stdout.readline())["link"]

        def mjctl(*args):
            return subprocess.run([sys.executable, "-m", "host_tools.cli.mjctl", "--port", link]
                                  + list(args), cwd=root, capture_output=True, text=True,
                                  timeout=120)
        st = mjctl("status", "--json")
        assert st.returncode == 0, st.stderr
        assert json.loads(st.stdout)["build"].startswith("deploy-")
        test = mjctl("--key", str(key), "selftest", "--json")
        assert test.returncode == 1, test.stderr          # the injected fault
        items = {r["item"]: r["pass"] for r in json.loads(test.stdout)["items"]}
        assert [name for name, ok in items.items() if not ok] == ["lifter 2"]
        st = mjctl("status")
        assert "lift_stuck" in st.stdout and "fix" in st.stdout and "limit switch" in st.stdout
        wrong = tmp_path / "wrong.key"
        wrong.write_bytes(bytes(32))
        refused = mjctl("--key", str(wrong), "selftest")
        assert refused.returncode == 2 and "wrong key" in refused.stderr
    finally:
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
    assert p.returncode == 0, p.stderr.read()
