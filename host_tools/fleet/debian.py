"""The Debian packages the fleet's tools run on (mosquitto for broker.py,
Chromium for browser.py): installed when missing and root can, as the
Makefile installs gcc-multilib for the twin, else the one command to run,
said. One place, so that both tools decide and speak alike; each names
its packages, the files it checks and what it is.

    python -m host_tools.fleet.broker --install     (make broker)
    python -m host_tools.fleet.browser --install    (make browser)
"""

import os
import shutil
import subprocess
import sys


def listed(names):
    """"a", "a and b", "a, b and c": names as a sentence lists them."""
    return names[0] if len(names) == 1 else "%s and %s" % (", ".join(names[:-1]), names[-1])


def install(packages, installed, error, user, role, named, complete=None):
    """`packages` by apt-get when installed() is false, or when complete()
    (installed and the optional extras there too) is false and root can.

    installed(): the files the tool cannot run without are there; named:
    those of them a failed install names. user ("the broker") and role
    ("the telemetry's broker") make the messages; error: the tool's
    exception, raised when root cannot install what the tool needs (the
    command to run, said) or apt-get leaves a file missing."""
    if (complete or installed)():
        return
    root = os.geteuid() == 0 and shutil.which("apt-get") is not None
    if not root:
        if installed():
            return                 # what is missing is optional
        raise error("%s needs Debian's %s: run  sudo apt-get install %s"
                    % (user, packages[0], " ".join(packages)))
    print("installing %s (%s)" % (listed(packages), role), flush=True)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    if not installed():
        raise error("apt-get installed %s, but %s is not there" % (packages[0], " or ".join(named)))


def main(argv, module, install_fn, error):
    """`python -m <module> --install`: install_fn(); its error said on
    stderr, exit 2."""
    if argv == ["--install"]:
        try:
            install_fn()
        except (error, subprocess.CalledProcessError) as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    print("usage: python -m %s --install" % module, file=sys.stderr)
    return 2
