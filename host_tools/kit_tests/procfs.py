"""What the kit's tests read of a process in Linux's /proc/<pid>/stat:
its parent, whether it still runs, the CPU time it has taken."""

import os

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


def _fields(pid):
    """The fields after the command's name (which may hold spaces and
    parentheses): [0] the state, [1] the parent, [11] and [12] the user
    and system time in clock ticks (proc(5))."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()


def parent(pid):
    """The parent's pid, or None when `pid` is gone."""
    try:
        return int(_fields(pid)[1])
    except (FileNotFoundError, ProcessLookupError):
        return None


def running(pid):
    """Whether `pid` exists and is not a zombie."""
    try:
        return _fields(pid)[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def cpu_seconds(pid):
    """The CPU time `pid` has taken, user and system, all its threads."""
    fields = _fields(pid)
    return (int(fields[11]) + int(fields[12])) * TICK_S
