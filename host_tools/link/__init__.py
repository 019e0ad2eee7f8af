"""The host's end of the link (docs/protocol.md):
    client.py   LinkClient: requests, answers and events over a serial line
    codec.py    the firmware's codec (firmware/link/) as the host uses it
    mux.py      the sharer: many clients on one table's port
"""
