"""What the kit's tests put on a QEMU board's flash."""

import pytest

from host_tools.image.mpenv import ROOT


@pytest.fixture
def shipped_files():
    """The flash's files as a table maker writes them: firmware/'s config
    and tags, no qemu.json (the board stops at the REPL)."""
    return {name: (ROOT / "firmware" / name).read_bytes() for name in ("config.json", "tags.txt")}
