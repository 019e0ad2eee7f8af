"""Display board driver (firmware/drivers/panel.py, Display) on the fake HAL's UART1.
Expected frames are built here from docs/hardware.md, not from the driver:

    0x7E | cmd | len | data | sum | 0x7F,  sum = (cmd + len + sum(data)) & 0xFF
    ACK: 0x7E 0x80 0x01 cmd sum 0x7F
"""

from firmware.drivers.panel import Display
from firmware.fakes.hal import FakeHal, shipped_pins

PINS = shipped_pins()
ACK_MS = 200


def doc_frame(cmd, data):
    s = cmd + len(data)
    for b in data:
        s += b
    return bytes([0x7E, cmd, len(data)] + list(data) + [s & 0xFF, 0x7F])


def doc_ack(cmd):
    return doc_frame(0x80, [cmd])


def make():
    hal = FakeHal()
    uart = hal.uart(1, PINS["display_tx"], PINS["display_rx"])
    return uart, Display(uart, ACK_MS)


def test_the_documented_ack_is_what_the_table_sends():
    # the doc's ACK layout, written out: 7E 80 01 cmd (0x80+0x01+cmd) 7F
    assert doc_ack(0x03) == bytes([0x7E, 0x80, 0x01, 0x03, 0x84, 0x7F])


def test_frame_bytes_of_every_command():
    uart, disp = make()
    disp.show_gold(0, 27)
    assert uart.take() == doc_frame(0x01, [27])
    disp.show_gold(0, 255)               # blank
    assert uart.take() == doc_frame(0x01, [255])
    disp.show_dice(0, 3, 6, True)
    assert uart.take() == doc_frame(0x02, [3, 6, 1])
    disp.show_dice(0, 5, 2, False)
    assert uart.take() == doc_frame(0x02, [5, 2, 0])
    disp.show_dealer(0, 2, 7)
    assert uart.take() == doc_frame(0x03, [2, 7])
    disp.show_dealer(0, 255, 0)          # no dealer
    assert uart.take() == doc_frame(0x03, [255, 0])
    disp.show_dealer(0, 1, 300)          # a streak past a byte shows 255
    assert uart.take() == doc_frame(0x03, [1, 255])
    disp.clear(0)
    assert uart.take() == doc_frame(0x06, [])
    assert uart.take() == b""
    assert disp.sent == 8


def test_the_sum_wraps():
    uart, disp = make()
    disp.show_count(0, 0xFFFF, 255, 255)
    expected = doc_frame(0x04, [255] * 4)
    assert uart.take() == expected
    assert expected[-2] == (4 + 4 + 4 * 255) & 0xFF


def test_an_ack_clears_one_pending_frame():
    uart, disp = make()
    disp.show_gold(0, 1)
    disp.show_dice(0, 1, 2, True)
    assert disp.pending == 2
    uart.feed(doc_ack(0x01))
    disp.poll(20)
    assert disp.pending == 1
    uart.feed(doc_ack(0x02))
    disp.poll(30)
    assert disp.pending == 0
    disp.poll(10000)                     # nothing pending: no fault, ever
    assert disp.fault == 0


def test_an_ack_split_over_two_polls_counts():
    uart, disp = make()
    disp.clear(0)
    ack = doc_ack(0x06)
    uart.feed(ack[:2])
    disp.poll(10)
    assert disp.pending == 1
    uart.feed(ack[2:])
    disp.poll(20)
    assert disp.pending == 0


def test_an_ack_with_a_bad_sum_or_end_is_not_an_ack():
    uart, disp = make()
    disp.clear(0)
    bad = bytearray(doc_ack(0x06))
    bad[4] ^= 0x01
    uart.feed(bad)
    disp.poll(10)
    assert disp.pending == 1
    bad = bytearray(doc_ack(0x06))
    bad[5] = 0x00
    uart.feed(bad)
    disp.poll(20)
    assert disp.pending == 1


def test_an_ack_with_nothing_pending_is_ignored():
    uart, disp = make()
    uart.feed(doc_ack(0x01))
    disp.poll(10)
    assert disp.pending == 0
    disp.clear(20)
    assert disp.pending == 1


def test_no_ack_by_ack_ms_is_fault_30():
    uart, disp = make()
    disp.show_gold(1000, 3)
    disp.poll(1000)
    disp.poll(1000 + ACK_MS)
    assert disp.fault == 0
    disp.poll(1000 + ACK_MS + 1)
    assert disp.fault == 30
    assert disp.detail == {"count": 1, "ms": ACK_MS}


def test_the_next_frame_gets_its_own_ack_time():
    uart, disp = make()
    disp.show_gold(0, 3)
    disp.clear(0)
    uart.feed(doc_ack(0x01))
    disp.poll(150)
    disp.poll(150 + ACK_MS)
    assert disp.fault == 0 and disp.pending == 1
    disp.poll(150 + ACK_MS + 1)
    assert disp.fault == 30


def test_noise_bytes_are_ignored():
    uart, disp = make()
    disp.show_gold(0, 3)
    disp.clear(0)
    uart.feed(b"\x00\xff\x7f\x80\x01\x13")
    uart.feed(doc_ack(0x01))
    uart.feed(b"\x55\xaa")
    uart.feed(doc_ack(0x06))
    uart.feed(b"\x01\x02\x03")
    disp.poll(10)
    assert disp.pending == 0
    disp.poll(1000)
    assert disp.fault == 0
