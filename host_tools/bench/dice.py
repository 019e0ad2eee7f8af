"""The dice's fairness: ROLLS rolls of the firmware's own dice (mp_dice.py
under MicroPython: firmware.drivers.panel on the HAL's DRBG) and the
chi-square test of the twelve faces' counts (both dice together) against a
fair die, 5 degrees of freedom, as `mjctl dice-test` computes it.

dice_chi2_p is the probability that a fair die gives counts at least this
far from even: p >= 0.01 means this run gives no evidence of bias at the
1 % level. A fair die falls below 0.01 in one run out of a hundred, so one
OVER is a reason to run again, not a verdict; a die with one face half a
percentage point too likely (17.2 % instead of 16.7 %) falls far below it
every time at this many rolls."""

import json
import subprocess
from pathlib import Path

from host_tools.bench.stats import chi2_faces
from host_tools.image.mpenv import code_root, micropython_binary

ROLLS = 600000
SCRIPT = Path(__file__).with_name("mp_dice.py")


def measure(rolls=ROLLS, source=False, seed=None):
    """seed: the DRBG's raw generator seeded as a virtual table's (the
    same counts every run), else os.urandom as on the board."""
    cwd, code = code_root(source)
    seeded = [] if seed is None else [str(seed)]
    p = subprocess.run([str(micropython_binary()), str(SCRIPT), str(cwd), str(rolls)] + seeded,
                       cwd=str(cwd), capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("mp_dice.py failed (exit %d): %s" % (p.returncode, p.stderr.strip()))
    out = json.loads(p.stdout.strip().splitlines()[-1])
    faces = [x + y for x, y in zip(out["a"], out["b"])]
    chi2, p_value = chi2_faces(faces)
    per_die = {k: round(chi2_faces(out[k])[1], 4) for k in ("a", "b")}
    figures = {"dice_chi2_p": p_value}
    details = {"rolls": rolls, "faces": faces, "chi2": round(chi2, 3), "dof": 5,
               "p_per_die": per_die, "code": code,
               "rng": "hal.rand: HMAC_DRBG (firmware/drbg.py) seeded from "
                      + ("os.urandom (MicroPython unix port), as the board's" if seed is None
                         else "a generator seeded with %d, as a virtual table's" % seed)}
    return figures, details
