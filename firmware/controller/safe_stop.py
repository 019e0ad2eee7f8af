"""A fault raised: the table stopped safe, the fault counted, logged and
told (docs/reliability.md). The cycle's tick raises them (table.py: a
driver's fault, the builder's, the HAL's output guard, a power cut found
at boot) and main.run a bug in the loop (`crashed`); a technician's
request clears one (controller/service_work.py, `clear`); the log is the
counters file's (controller/saved_state.py).

    every output off, a technician's jog or scan dropped, the builder and
    the lifters stopped; the state the fault stopped (where a clear goes
    back to: `resume_state`); the fault, its detail and time; its count;
    the log's entry saved; FAULT entered; the `fault` event
"""

from firmware import faults
from firmware.faults import FIRMWARE_ERROR as _FIRMWARE_ERROR
from firmware.controller.states import BOOT, FAULT, IDLE


def fault(ctl, now, code, detail):
    """Fault `code` raised with its `detail` (a dict of public facts, or
    None)."""
    ctl.hal.all_off()
    ctl.work = None                   # a jog or a scan ends with the motors
    ctl.builder.stop()
    for lifter in ctl.devices.lifters:
        lifter.stop()
    if ctl.state != FAULT:
        ctl.resume_state = ctl.state if ctl.state != BOOT else IDLE
    ctl.fault = code
    ctl.fault_detail = detail
    ctl.fault_at = now
    counts = ctl.fault_counts
    if code < len(counts) and counts[code] < 255:
        counts[code] += 1
    ctl._save([now, code, faults.name_of(code), detail or {}])
    name = faults.name_of(code)
    ctl._enter(now, FAULT)
    ctl.emit("fault", {"code": code, "name": name, "detail": detail or {}})


def crashed(ctl, now, exc):
    """A bug raised in the control loop (main.run): the safe state, and the
    bug on the link."""
    ctl.hal.all_off()
    fault(ctl, now, _FIRMWARE_ERROR, {"reason": "%s: %s" % (type(exc).__name__, exc)})
