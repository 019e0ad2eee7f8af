"""The host's end of the link (docs/protocol.md):
    client.py           LinkClient: requests, answers and events over a serial line
    service_session.py  its service sessions: opened with the key, requests signed
    codec.py            the firmware's codec (firmware/link/) as the host uses it
    mux.py              many clients on one table's port: the sharer found, started, stopped
    sharer.py           the sharer's process: the port's frames routed among its clients
"""
