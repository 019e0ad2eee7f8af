"""Host-side tools (CPython): the virtual table, the technician CLI, deploy."""
