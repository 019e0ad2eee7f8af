"""What goes onto a board, and where the MicroPython builds are (docs/deploy.md):
    mpenv.py           the twin, the unfrozen build and the .mpy tree on this machine
    deploy.py          `make deploy`: the firmware as .mpy files onto a board
    deploy_build.py    its build: the .mpy tree, lib/ and manifest.txt staged
    deploy_board.py    its board side: mpremote, the board's files listed
    board_image.py     `make firmware`, `make flash`: the frozen image, flashed
    firmware_build.py  its build by ESP-IDF (the kit's or the user's)
    vfs_image.py       the board's filesystem as an image
    tablekey.py        a table's service key file
"""
