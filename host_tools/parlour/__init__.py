"""One table of `make fleet` in its own process (table.py): the virtual
table with its firmware, players, faults and technician, reusing the live
view's and the soak's. A package above both, which host_tools/fleet starts
by name (`python -m host_tools.parlour.table`) and never imports, so that
mjctl (host_tools/cli) can use the fleet without a cycle."""
