"""What must survive a power cut at any instant: the table's counters and
its fault log, in one file of the board's flash.

Written whole to NAME.new, then renamed over NAME: the rename is atomic
(littlefs on the board, a POSIX file system on the PC), so a cut leaves
the old file or the new one, never a mix. The text carries its CRC-16
(the link's, firmware/link/frame.py): a file damaged on the flash is found
and said so, never read as counters.

Resident (imported with the controller): loading it for each save (a few
a hand) and forgetting it after cost more heap in the holes it left than it
takes (measured: a hand needed 1 KB more).
"""

import json
import os

from firmware.link.frame import crc16


def save(path, obj):
    text = json.dumps(obj)
    with open(path + ".new", "w") as f:
        f.write("%04x %s" % (crc16(text.encode()), text))
    os.rename(path + ".new", path)


def load(path):
    """The object last saved; None if there is none yet; ValueError if the
    file is damaged (its CRC or its JSON)."""
    try:
        with open(path) as f:
            data = f.read()
    except OSError:
        return None
    text = data[5:]
    try:
        good = data[4:5] == " " and int(data[:4], 16) == crc16(text.encode())
    except ValueError:
        good = False
    if not good:
        raise ValueError("%s is damaged (its CRC does not match)" % path)
    return json.loads(text)
