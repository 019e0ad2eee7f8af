"""A Mosquitto broker for the tables' telemetry, started by the project on
127.0.0.1 (docs/fleet.md, The broker):

    with Broker(tables=[("hall", "t1", "secret1")]) as b:
        b.port, b.dashboard          # the port; the dashboard's (user, password)

Debian's `mosquitto` package, installed when missing and root can
(`python -m host_tools.fleet.broker --install`, what `make broker` runs),
as the Makefile installs gcc-multilib for the twin. The broker runs from a
folder of its own: its config, a password file made by mosquitto_passwd
and an ACL. Nobody connects without a password; a connection's client id
is its user's name, so no user can take another's connection; a table
may publish only under `parlour/<site>/table/<id>/#` (its last-will too);
each screen (the page's `dashboard`, and one user per other screen) may
only read `parlour/#`. Nothing is kept on disk (persistence off): what is
retained lives as long as the broker does.
"""

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from host_tools.fleet import debian

MOSQUITTO = "/usr/sbin/mosquitto"
PASSWD = "/usr/bin/mosquitto_passwd"
DASHBOARD = "dashboard"


class BrokerError(Exception):
    pass


def table_user(site, table):
    """The broker user of a table: one per table, so the ACL can bind it
    to its own topics."""
    return "table-%s-%s" % (site, table)


def screen_user(name):
    """The read-only user of a screen other than the page: one per screen,
    since a user holds one connection at a time (use_username_as_clientid)."""
    return "%s-%s" % (DASHBOARD, name)


def topic_root(site, table):
    return "parlour/%s/table/%s" % (site, table)


def installed():
    return os.path.exists(MOSQUITTO) and os.path.exists(PASSWD)


def install():
    """Debian's mosquitto when it is missing: apt-get as root, else the
    one command to run, said (debian.py)."""
    debian.install(["mosquitto"], installed, BrokerError, user="the broker",
                   role="the telemetry's broker", named=[MOSQUITTO])


def version():
    """Mosquitto's version, as it says it ("2.0.11"), or None."""
    try:
        out = subprocess.run([MOSQUITTO, "-h"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = out.split()
    return words[2] if len(words) > 2 and words[:2] == ["mosquitto", "version"] else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """Mosquitto on 127.0.0.1, on a free port, with a password file and an
    ACL made for `tables`: (site, id, password) each. `dashboard` is the
    page's (user, password); `screens` names the other screens, each given
    its own read-only user in `self.screens[name]`."""

    def __init__(self, tables=(), port=None, screens=()):
        self.tables = list(tables)
        self.dashboard = (DASHBOARD, secrets.token_hex(8))
        self.screens = {name: (screen_user(name), secrets.token_hex(8)) for name in screens}
        self.port = port or free_port()
        self.dir = None
        self.proc = None

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()            # its folder goes too
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _write_config(self):
        d = self.dir
        pw = os.path.join(d, "passwd")
        open(pw, "w").close()
        readers = [self.dashboard] + list(self.screens.values())
        users = [(table_user(s, t), p) for s, t, p in self.tables] + readers
        for user, password in users:
            subprocess.run([PASSWD, "-b", pw, user, password], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.chmod(pw, 0o600)
        with open(os.path.join(d, "acl"), "w") as f:
            for s, t, _ in self.tables:
                f.write("user %s\ntopic write %s/#\n\n" % (table_user(s, t), topic_root(s, t)))
            for user, _ in readers:
                f.write("user %s\ntopic read parlour/#\n\n" % user)
        with open(os.path.join(d, "mosquitto.conf"), "w") as f:
            # Run as the user that started it (as root, mosquitto would
            # change to its own user, who cannot read this private folder).
            f.write("user %s\n" % pwd.getpwuid(os.geteuid()).pw_name)
            f.write("listener %d 127.0.0.1\n" % self.port)
            # Mosquitto lets any client take a connection by its client id
            # (the old one is closed and its last-will published): here the
            # id is replaced by the user's name, so only the holder of a
            # table's password can take that table's. Mosquitto 2.0 has
            # nothing simpler that does it: its ACL rules topics, not ids;
            # the dynamic-security plugin binds a user to an id but leaves
            # the id free to others; clientid_prefixes is one global
            # prefix, deprecated. A listener's option: a parlour sets it on
            # each listener (docs/fleet.md, The broker).
            f.write("use_username_as_clientid true\n")
            f.write("allow_anonymous false\n")
            f.write("password_file %s\n" % pw)
            f.write("acl_file %s\n" % os.path.join(d, "acl"))
            f.write("persistence false\n")
            f.write("log_dest file %s\n" % os.path.join(d, "mosquitto.log"))
            f.write("log_type error\nlog_type warning\nlog_type notice\n")

    def start(self, timeout=10.0):
        install()
        if self.dir is None:
            self.dir = tempfile.mkdtemp(prefix="broker-")
            self._write_config()
        self.proc = subprocess.Popen([MOSQUITTO, "-c", os.path.join(self.dir, "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise BrokerError("mosquitto stopped at once: %s" % self.proc.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.02)       # the broker's own start, in real time
        self.kill()
        raise BrokerError("mosquitto does not listen on 127.0.0.1:%d" % self.port)

    def kill(self):
        """The broker gone at once, as a crash or a cut cable leaves it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def rss(self):
        """The broker's resident memory in bytes (/proc), or None."""
        try:
            with open("/proc/%d/status" % self.proc.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except (OSError, AttributeError):
            pass
        return None

    def log(self):
        try:
            with open(os.path.join(self.dir, "mosquitto.log")) as f:
                return f.read()
        except (OSError, TypeError):
            return ""


def main(argv):
    return debian.main(argv, "host_tools.fleet.broker", install, BrokerError)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
