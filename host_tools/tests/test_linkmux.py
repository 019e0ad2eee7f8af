"""Many clients, one table (host_tools/link/mux.py): the sharer routes each
answer to the client that asked under that client's number, sends a
retry under the first try's number, gives every event to every client; a
stale sharer is replaced, an idle one exits; and two mjctl at once on the
virtual table of `mjctl --sim serve --key FILE` both work."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import serial

from firmware import frame
from firmware.tests.test_frame import frames_of
from host_tools.link import codec as link_codec, mux as linkmux
from host_tools.link.client import LinkClient
from host_tools.image.mpenv import raw_pty

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    """Sharers of this test only, quick to leave when idle."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("MJCTL_SHARE_IDLE", "1")
    os.makedirs(tmp_path / "run")
    return tmp_path / "run" / ("mjctl-%d" % os.getuid())


def _frames(fd, n, deadline_s=5.0):
    """n frames read from fd (the fake controller's end), with a deadline."""
    import select
    reader, out, deadline = frame.FrameReader(), [], time.monotonic() + deadline_s
    while len(out) < n:
        left = deadline - time.monotonic()
        assert left > 0, "only %d of %d frames came" % (len(out), n)
        if select.select([fd], [], [], left)[0]:
            out += frames_of(reader, os.read(fd, 4096))
    return out


def _recv_frames(sock, n, deadline_s=5.0):
    reader, out, deadline = frame.FrameReader(), [], time.monotonic() + deadline_s
    while len(out) < n:
        left = deadline - time.monotonic()
        assert left > 0, "only %d of %d frames came" % (len(out), n)
        sock.settimeout(left)
        data = sock.recv(4096)
        assert data, "the sharer closed the connection"
        out += frames_of(reader, data)
    return out


def test_answers_go_to_the_client_that_asked_and_events_to_every_client(tmp_path):
    """A fake controller on a pty: two clients ask with the same number;
    the controller sees two numbers and answers in the other order; each
    client gets its own answer under its own number. A retry goes out
    under the first try's number; an event reaches both."""
    import socket
    ctrl, dev = raw_pty()
    got = {}
    th = threading.Thread(target=lambda: got.update(rc=linkmux.serve(
        os.ttyname(dev), str(tmp_path / "state.json"), idle_s=0.5,
        ready=lambda line: got.update(ready=json.loads(line)))), daemon=True)
    th.start()
    deadline = time.monotonic() + 5
    while "ready" not in got:
        assert time.monotonic() < deadline and th.is_alive(), got
        time.sleep(0.01)
    assert got["ready"]["ok"], got
    a = socket.create_connection(("127.0.0.1", got["ready"]["port"]))
    b = socket.create_connection(("127.0.0.1", got["ready"]["port"]))
    try:
        req_a = link_codec.encode_request(7, "status")
        req_b = link_codec.encode_request(7, "sensors")
        a.sendall(req_a)
        (k1, up_a, p1), = _frames(ctrl, 1)
        b.sendall(req_b)
        (k2, up_b, p2), = _frames(ctrl, 1)
        assert (k1, k2) == (link_codec.REQUEST, link_codec.REQUEST)
        assert b'"status"' in p1 and b'"sensors"' in p2 and up_a != up_b
        a.sendall(req_a)                                   # a's retry: the same number
        (_, up_retry, p3), = _frames(ctrl, 1)
        assert up_retry == up_a and p3 == p1
        os.write(ctrl, frame.encode(link_codec.RESPONSE, up_b, b'{"ok":true,"op":"sensors"}'))
        os.write(ctrl, frame.encode(link_codec.RESPONSE, up_a, b'{"ok":true,"op":"status"}'))
        os.write(ctrl, frame.encode(link_codec.RESPONSE, up_a, b'{"ok":true,"op":"status"}'))
        os.write(ctrl, frame.encode(link_codec.EVENT, 42, b'{"ev":"state","t":5}'))
        got_a = _recv_frames(a, 2)
        got_b = _recv_frames(b, 2)
        # The repeated answer (for the retry) went to nobody twice.
        assert got_a == [(link_codec.RESPONSE, 7, b'{"ok":true,"op":"status"}'),
                         (link_codec.EVENT, 42, b'{"ev":"state","t":5}')]
        assert got_b == [(link_codec.RESPONSE, 7, b'{"ok":true,"op":"sensors"}'),
                         (link_codec.EVENT, 42, b'{"ev":"state","t":5}')]
        info = linkmux.probe(got["ready"]["port"], os.ttyname(dev))
        assert info is not None and info["pid"] == os.getpid() and info["clients"] == 2
    finally:
        a.close()
        b.close()
    th.join(timeout=5)                                     # idle: it leaves by itself
    assert not th.is_alive() and got["rc"] == 0
    assert not (tmp_path / "state.json").exists()
    os.close(ctrl)
    os.close(dev)


def test_a_stale_sharer_is_replaced_and_an_idle_one_exits(state_dir):
    """The port of a pty whose far end answers nothing is still a port:
    mjctl's sharer opens it. A state file naming a dead sharer is
    replaced; the sharer exits once idle; a URL or a path that does not
    exist is used as it is."""
    ctrl, dev = raw_pty()
    port = os.ttyname(dev)
    try:
        assert linkmux.shared("socket://127.0.0.1:1") == "socket://127.0.0.1:1"
        assert linkmux.shared("/dev/no-such-port") == "/dev/no-such-port"
        url = linkmux.shared(port)
        tcp = int(url.rsplit(":", 1)[1])
        info = linkmux.probe(tcp, os.path.realpath(port))
        assert info is not None
        assert linkmux.shared(port) == url                 # found again, not started again
        os.kill(info["pid"], signal.SIGKILL)               # stale: its state file stays
        (state,) = [p for p in state_dir.iterdir() if p.suffix == ".json"]
        assert json.loads(state.read_text())["pid"] == info["pid"]
        url2 = linkmux.shared(port)
        info2 = linkmux.probe(int(url2.rsplit(":", 1)[1]), os.path.realpath(port))
        assert info2 is not None and info2["pid"] != info["pid"]
        # Idle (MJCTL_SHARE_IDLE=1 s): it exits and takes its state file.
        deadline = time.monotonic() + 10
        while state.exists():
            assert time.monotonic() < deadline, "the idle sharer did not exit"
            time.sleep(0.05)
        assert linkmux.probe(int(url2.rsplit(":", 1)[1])) is None
    finally:
        os.close(ctrl)
        os.close(dev)


def test_a_port_held_by_another_sharer_is_named(state_dir, tmp_path):
    ctrl, dev = raw_pty()
    port = os.ttyname(dev)
    holder = serial.Serial(port, exclusive=True)
    try:
        with pytest.raises(serial.SerialException) as e:
            linkmux.shared(port)
        assert "held by another program" in str(e.value) and str(os.getpid()) in str(e.value)
    finally:
        holder.close()
        os.close(ctrl)
        os.close(dev)


def _mjctl(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "host_tools.cli.mjctl"] + list(args), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_live_in_one_window_status_and_jog_in_another(state_dir, tmp_path):
    """`mjctl live` runs while `mjctl status` and `mjctl --key FILE jog`
    run beside it, on the virtual table of `mjctl --sim serve --key FILE`
    (the file made there): all three answer, and the jog's event reaches
    a third client watching."""
    key = tmp_path / "practice.key"
    srv = _mjctl("--sim", "serve", "--key", str(key), "--json")
    try:
        first = json.loads(srv.stdout.readline())
        link = first["link"]
        assert first["key"]["made"] and len(key.read_bytes()) == 32
        assert first["key"]["fingerprint"] == __import__("hashlib").sha256(
            key.read_bytes()).hexdigest()[:16]
        live = _mjctl("--port", link, "live", "--count", "30", "--every", "0.1", "--json")
        assert json.loads(live.stdout.readline())["state"] == "idle"   # live is running
        with LinkClient(linkmux.shared(link)) as watcher:
            watcher.hello()
            status = _mjctl("--port", link, "status", "--json")
            out, err = status.communicate(timeout=60)
            assert status.returncode == 0, err
            assert json.loads(out)["state"] == "idle"
            jog = _mjctl("--port", link, "--key", str(key), "jog", "plate", "200", "--json")
            out, err = jog.communicate(timeout=60)
            assert jog.returncode == 0, err
            assert json.loads(out)["actuator"] == "plate"
            assert live.poll() is None, "live ended before the others ran beside it"
            ev = watcher.wait_event(lambda e: e["ev"] == "jogged", timeout=10)
            assert ev["name"] == "plate"
            assert watcher.request("status")["state"] == "idle"
        out, err = live.communicate(timeout=60)
        assert live.returncode == 0, err
        assert len(out.splitlines()) == 29 and "Traceback" not in err
        again = _mjctl("--sim", "serve", "--key", str(key), "--json")   # the same key again
        try:
            assert json.loads(again.stdout.readline())["key"] == dict(first["key"], made=False)
        finally:
            again.send_signal(signal.SIGINT)
            again.wait(timeout=30)
    finally:
        srv.send_signal(signal.SIGINT)
        srv.wait(timeout=30)


def test_the_deploy_and_the_flash_release_the_port(state_dir):
    """mpremote and esptool need the port to themselves: release() stops
    the port's sharer, and the next mjctl starts another."""
    ctrl, dev = raw_pty()
    port = os.ttyname(dev)
    try:
        assert linkmux.release(port) is False                 # none runs
        url = linkmux.shared(port)
        pid = linkmux.probe(int(url.rsplit(":", 1)[1]))["pid"]
        assert linkmux.release(port) is True
        assert linkmux.probe(int(url.rsplit(":", 1)[1])) is None
        deadline = time.monotonic() + 10
        while os.path.exists("/proc/%d" % pid) and \
                open("/proc/%d/stat" % pid).read().split()[2] != "Z":
            assert time.monotonic() < deadline, "the sharer did not leave"
            time.sleep(0.02)
        url2 = linkmux.shared(port)
        assert linkmux.probe(int(url2.rsplit(":", 1)[1]))["pid"] != pid
    finally:
        os.close(ctrl)
        os.close(dev)
