"""The practice table of `mjctl --sim serve` (docs/technician.md, Practise
a repair): a technician repairs an injected fault with his own steps, and
the virtual table goes on to the next hand.

Two ways the technician's hands reach the virtual table:

* a jog of the part a fault holds, as the fault's fix says: the fix of
  `lane_jam` is "open the lane's cover, clear the chute, `jog lane N 500`
  to see it turn", so a jog of lane N while the plate stands still (only a
  technician's jog runs a lane without the plate) is that repair, done by
  hand just before; the same for `plate_stall` and a jog of the plate
  with every lane still. A part the fault does not hold is not repaired
  by its jog: the jog shows the technician he is at the wrong part.
* a typed line in serve's own terminal, for what no jog can show:
  `repair` (every injected fault: the tile put back, the sensor cleaned,
  the cable plugged in, as technician.visit does for the table view),
  `repair NAME` (that fault only), `inject NAME` (one more fault, to
  practise another repair without a restart) and `faults` (what is
  injected now).

Everything runs in the table's own thread: `PracticeHands` is attached to
the table like a device (next_time/run/fire), and the typed lines wait in
its queue until the table's next step.
"""

import threading

from host_tools.texts import t

from . import technician


class PracticeHands:
    """The technician's hands at a served virtual table (attaches itself)."""

    def __init__(self, table, say=print):
        self.table = table
        self.say = say                  # how a typed line's answer is shown
        self.asked = []                 # typed lines, oldest first (another thread's)
        self._lock = threading.Lock()
        table.attach(self)

    # -- the jog that is a repair ------------------------------------------------

    def _jogged_parts(self):
        """Injected faults a running technician's jog repairs now."""
        table = self.table
        plate_on = table.plate.duty > 0
        lanes_on = [lane.feed for lane in table.lanes]
        out = []
        for f in table.faults:
            if f.kind == "lane_jam" and lanes_on[f.arg] and not plate_on:
                out.append(f.text)
            elif f.kind == "plate_stall" and plate_on and not any(lanes_on):
                out.append(f.text)
        return out

    def _repair_jogged(self):
        for name in self._jogged_parts():
            for done in self.table.clear_fault(name):
                self.table.log_event("technician", None, "repaired by hand before the jog", done)
                self.say(t("practice.repaired_jog", fault=done))

    # -- the device's interface -------------------------------------------------

    def next_time(self, now):
        return now if self.asked else None

    def run(self, dt):
        # The outputs a tick set are all set when time moves on: a build
        # that starts the plate and the lanes in one tick is no jog.
        self._repair_jogged()

    def walls_up(self, now):
        """The table tells every attached device; the hands wait for a fault."""

    def fire(self, now):
        with self._lock:
            lines, self.asked = self.asked, []
        for line in lines:
            self.say(self._do(line))

    # -- typed lines ----------------------------------------------------------

    def ask(self, line):
        """A typed line, done at the table's next step (any thread)."""
        with self._lock:
            self.asked.append(line.strip())

    def _do(self, line):
        word, _, arg = line.partition(" ")
        arg = arg.strip()
        table = self.table
        if word == "repair":
            names = [arg] if arg else [f.text for f in table.faults if f.kind != "power_cut"]
            done, _ = technician.visit(table, None, repair=names)
            return t("practice.repaired", faults=", ".join(done)) if done else \
                t("practice.nothing")
        if word == "inject" and arg:
            try:
                return t("practice.injected", fault=table.inject(arg))
            except ValueError as e:
                return t("practice.not_injected", reason=e)
        if word == "faults":
            return t("practice.faults", faults=", ".join(table.active_faults) or "-")
        return t("practice.help")


def read_lines(stream, hands, stop):
    """Typed lines from `stream` to `hands` until end of file or `stop` is
    set (a daemon thread's loop)."""
    while not stop.is_set():
        try:
            line = stream.readline()
        except (OSError, ValueError):
            return
        if not line:
            return
        if line.strip():
            hands.ask(line)
