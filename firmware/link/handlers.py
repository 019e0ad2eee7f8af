"""The modules that answer the link's requests, by their home in the
codec's table (codec.route): what LinkServer.attach is given once the
controller runs. `hello` and `status` are the server's own; the service
requests' module (link/service.py) comes at a visit's first request
(LinkServer._answer)."""

from firmware.link import commands, readouts

HANDLERS = {"commands": commands, "readouts": readouts}
