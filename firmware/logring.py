"""The last entries of a log, in slots made once, at boot: the fault log
(faults.py) and the service log (link/service.py).

An entry is a time and up to `width` fields. The fields are what the
firmware writes into them: small ints and its own string literals, which
take no heap, so adding an entry allocates nothing and keeps nothing. A log
of tuples or dicts kept each entry as blocks of its own, wherever the heap
had room when it came, until `size` entries later; over a day of faults
and refused requests those blocks split the free heap (on the twin, the
50-hand soak: the largest free block fell from 3 KB to 1 KB,
docs/heap-idioms.md).
"""

from array import array


class LogRing:
    def __init__(self, size, width):
        self.size = size
        self.width = width
        self.n = 0                         # entries held (at most size)
        self.next = 0                      # the slot the next entry takes
        self.t = array("i", bytes(4 * size))
        self.used = bytearray(size)        # fields written, per entry
        self.fields = [None] * (size * width)

    def __len__(self):
        return self.n

    def add(self, t, n):
        """A new entry at time t with n fields, taking the oldest's slot
        when full: the index of its first field in `fields` (the caller
        writes them there)."""
        i = self.next
        self.t[i] = t
        self.used[i] = n
        at = i * self.width
        for k in range(self.width):
            self.fields[at + k] = None
        self.next = (i + 1) % self.size
        if self.n < self.size:
            self.n += 1
        return at

    def slot(self, age):
        """(t, index of the first field, fields used) of the entry `age`
        entries back (0: the newest)."""
        i = (self.next - 1 - age) % self.size
        return self.t[i], i * self.width, self.used[i]

    def entry(self, age):
        """The entry `age` back as a list [t, field, ...] (answers and
        saves allocate; adding does not)."""
        t, at, n = self.slot(age)
        out = [t]
        for k in range(n):
            out.append(self.fields[at + k])
        return out
