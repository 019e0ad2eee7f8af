"""The QEMU console's bridge (host_tools/sim/qemu_machine.py, ConsoleBridge.split):
the text UART0 carries outside the link's frames goes to the log, whatever
the chunks the socket hands over; every frame is left out whole."""

from hypothesis import given, strategies as st

from firmware.frame import encode
from host_tools.sim.qemu_machine import ConsoleBridge


def _bridge():
    b = ConsoleBridge.__new__(ConsoleBridge)    # the splitter alone: no socket, no thread
    b._pending, b._framed = b"", False
    return b


FRAME = encode(0x10, 7, b'{"op":"status","state":"idle"}')
STREAM = (b"ESP-ROM:esp32s3-20210327\r\nentry 0x403c8878\r\n" + FRAME
          + b"GC: total: 64000, used: 6464\n" + FRAME + FRAME + b"\xa5 not a frame\n")
TEXT = b"ESP-ROM:esp32s3-20210327\r\nentry 0x403c8878\r\nGC: total: 64000, used: 6464\n"


@given(st.lists(st.integers(min_value=1, max_value=40), max_size=60))
def test_the_text_outside_frames_is_kept_whatever_the_chunks(sizes):
    b = _bridge()
    out, i = b"", 0
    for n in sizes + [len(STREAM)]:
        out += b.split(STREAM[i:i + n])
        i += n
    assert out == TEXT + b"\xa5 not a frame\n"
    assert b._framed and b._pending == b""


def test_a_sync_whose_length_is_too_long_is_text():
    b = _bridge()
    junk = b"\xa5\x5a\x10\x01\xff\xff"              # a length of 65,535: no frame
    assert b.split(junk + FRAME) == junk
    assert b._framed


def test_how_qemu_ended_is_said_in_words():
    from host_tools.sim.qemu import _ended
    assert _ended(-11) == "SIGSEGV"
    assert _ended(1) == "exit 1"
    assert _ended(-200) == "signal 200"


def test_the_hosts_bytes_reach_uart0_only_once_the_firmware_started(tmp_path):
    """What the host writes while ESP-IDF starts is dropped (a byte there
    crashes the boot in QEMU); once `started` says so, it goes through."""
    import os
    import select
    import socket
    import threading

    qemu_side, bridge_side = socket.socketpair()
    link_r, link_w = os.pipe()               # the host's writes come from the link pty
    started = threading.Event()
    bridge = ConsoleBridge(bridge_side, link_r, str(tmp_path / "firmware.log"),
                           started=started.is_set)
    try:
        os.write(link_w, b"hello during the boot")
        assert not select.select([qemu_side], [], [], 0.3)[0]     # 6 of the bridge's polls
        started.set()
        os.write(link_w, b"hello")
        assert select.select([qemu_side], [], [], 5.0)[0]
        assert qemu_side.recv(100) == b"hello"
        assert bridge.dropped == len(b"hello during the boot")
    finally:
        bridge.stop()
        qemu_side.close()
        os.close(link_w)
        os.close(link_r)
