"""The board's network for the telemetry (link/telemetry.py): Wi-Fi, and
TLS to the broker. A module of its own, imported only by a running
telemetry, so that a table without it carries none of this (a method on
the HAL's class would grow its dict, and the heap, on every table).
Frozen into the board's image only (firmware/image/manifest.py): on the
twin, whose sockets are the host's (the broker on 127.0.0.1), importing
it fails and the telemetry takes the host's network as up."""

import network


def up(conf):
    """Wi-Fi started once with the SSID and password of `conf`
    (mqtt.json), never waited for (the ESP-IDF reconnects it); True once
    connected."""
    wlan = network.WLAN(network.STA_IF)
    if not wlan.active():
        wlan.active(True)
        wlan.connect(conf.get("wifi_ssid", ""), conf.get("wifi_password", ""))
    return wlan.isconnected()


def tls(hal, conf):
    """With `"tls": true` in mqtt.json: an SSLContext that checks the
    broker's certificate against the CA in the secret `mqtt.ca` (DER);
    else None (plain MQTT)."""
    if not conf.get("tls"):
        return None
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.verify_mode = ssl.CERT_REQUIRED
    f = hal.secret("mqtt.ca")
    try:
        ctx.load_verify_locations(cadata=f.read())
    finally:
        f.close()
    return ctx
