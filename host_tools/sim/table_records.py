"""What the virtual table records and counts: its event log, the
firmware's errors, its counters, the tiles it holds and the lower bound of
a build (bound.py). `TableRecords` is a part of VirtualTable (table.py),
which holds the devices they read.
"""

from .bound import lower_bound


class TableRecords:
    """The table's log, counters and lower bound."""

    def tiles_held(self):
        """Every tile the table holds, wherever it lies (the tray, the
        lanes and their chutes, the walls in play, the table top)."""
        n = len(self.plate.queue) + len(self.pile)
        for lane in self.lanes:
            n += sum(1 for t in lane.wall.tiles if t is not None) + (lane.chute is not None)
        return n + sum(len(w) for w in self.top_walls.values())

    def lower_bound(self, start_time=None, build=None):
        """The breakdown of bound.py for a build (default: the latest whose
        four walls are complete), or None. Times in it are ms from the
        start; `start` and `finish_at` are absolute."""
        cap = 2 * self.stacks
        if build is None:
            full = [k for k in range(min(len(l.walls) for l in self.lanes))
                    if all(len(l.walls[k].gaps) >= cap for l in self.lanes)]
            if not full:
                return None
            build = full[-1]
        if start_time is None:
            start_time = self.build_starts.get(build)
        if start_time is None or any(len(l.walls) <= build for l in self.lanes):
            return None
        out = lower_bound([l.walls[build].gaps for l in self.lanes], cap,
                          self.lanes[0].stack_ms, self.rfid.scan_ms(cap),
                          self.lifters[0].up_ms, self.players.reaction_ms,
                          self.config.dice_roll_ms)
        if out is not None:
            out.update(build=build, start=start_time, finish_at=start_time + out["total_ms"])
        return out

    def lower_bound_ms(self, start_time=None, build=None):
        b = self.lower_bound(start_time, build)
        return None if b is None else b["total_ms"]

    def firmware_error(self, what, detail):
        self.errors.append((self.now, what, detail))
        self.log_event("firmware error", None, what, detail)

    def log_event(self, source, index, what, *detail):
        self.log.append((self.now, source, index, what) + detail)

    def log_lines(self, since=0):
        """The event log as text, for debugging a run."""
        out = []
        for t, source, index, what, *detail in self.log:
            if t >= since:
                who = source if index is None else "%s %s" % (source, index)
                out.append("%9d  %-14s %s %s" % (t, who, what, " ".join(map(str, detail))))
        return "\n".join(out)

    def counters(self):
        return {
            "revolutions": self.plate.revolutions,
            "tiles_fed": [l.fed for l in self.lanes],
            "tiles_stacked": [l.stacked for l in self.lanes],
            "lifter_cycles": [l.cycles for l in self.lifters],
            "rfid_requests": self.rfid.requests,
            "rfid_replies": self.rfid.replies,
            "rfid_ignored": self.rfid.ignored,
            "display_frames": self.display.frames,
            "display_rejected": self.display.rejected,
            "key_presses": len(self.players.presses),
            "firmware_errors": len(self.errors),
            "boots": self.boots,
            "tiles_on_plate": len(self.plate.queue),
        }
