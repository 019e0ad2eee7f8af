"""What goes on the board: the .mpy files `make deploy` stages
(host_tools/deploy.py compile_tree: engine_core/ and firmware/, tests left
out, each compiled as it ships), compiled afresh into a temporary folder."""

import tempfile
from pathlib import Path

from host_tools import deploy


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
    figures = {"mpy_total_bytes": sum(sizes.values())}
    details = {"files": len(sizes), "per_package_bytes": per_package,
               "largest": [{"file": k, "bytes": v} for k, v in largest],
               "not_counted": "main.py, manifest.txt, config.json, tags.txt, service.key"}
    return figures, details
