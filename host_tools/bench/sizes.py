"""What goes on the board: the firmware frozen into the image (the twin's
frozen_content.o: the bytecode, constants and names of what
firmware/image/manifest.py freezes, as `size` counts its text and data),
and the .mpy files of a development deploy (host_tools/image/deploy.py
compile_tree: engine_core/ and firmware/, tests left out), compiled afresh
into a temporary folder."""

import subprocess
import tempfile
from pathlib import Path

from host_tools.image import deploy
from host_tools.image.mpenv import TWIN, twin_binary

FROZEN_OBJECT = TWIN.parent / "twin-build" / "frozen_content.o"


def frozen_bytes():
    """text + data of the twin's frozen content (make image builds it)."""
    twin_binary()
    out = subprocess.run(["size", str(FROZEN_OBJECT)], capture_output=True, text=True, check=True)
    text, data = out.stdout.splitlines()[1].split()[:2]
    return int(text) + int(data)


def measure():
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        files = deploy.compile_tree(out)
        sizes = {rel: (out / rel).stat().st_size for rel in files}
    per_package = {}
    for rel, n in sizes.items():
        pkg = rel.split("/")[0]
        per_package[pkg] = per_package.get(pkg, 0) + n
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    figures = {"mpy_total_bytes": sum(sizes.values()), "image_frozen_bytes": frozen_bytes()}
    details = {"files": len(sizes), "per_package_bytes": per_package,
               "largest": [{"file": k, "bytes": v} for k, v in largest],
               "not_counted": "main.py, manifest.txt, config.json, tags.txt, service.key"}
    return figures, details
