"""Host-side tools (CPython), one package per role:

    link/   the host's end of the link: client, codec, the sharer (mux)
    sim/    the virtual table, its launcher, players, technician, the virtual board
    cli/    the technician's operations, and mjctl the command line on top
    qa/     soak, power cuts, link fuzz
    bench/  every performance figure against its target
    view/   the table view (`make run`) and the wall view
    image/  deploy, the board's image and filesystem, table keys, the MicroPython builds
    texts/  every word shown (English, Chinese), the fault texts, event lines

Each package imports only those below it (host_tools/tests/test_layout.py):
texts <- link <- image <- sim <- cli <- qa <- bench, and view over cli and sim.
"""
