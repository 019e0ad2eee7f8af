"""A jog's arguments (firmware/link/service.py, codec.py) on both
interpreters: each checked, none assumed, a refused jog logged with its
details and nothing moved."""

from firmware.link.codec import LinkError
from firmware.tests.service_helpers import KEY, _Link, _cleaned, _jog, _log, _session


@_cleaned
def test_a_jog_names_its_lane_or_lifter_and_its_time_or_is_refused():
    link = _Link(KEY)
    token = _session(link)
    for actuator in ("lane", "lift_up", "lift_down"):
        code, msg = _jog(link, token, actuator=actuator, ms=500)          # no lane or lifter
        assert code == "bad_request" and "needs n" in msg and actuator in msg
        for n in (-1, 4):
            code, msg = _jog(link, token, actuator=actuator, n=n, ms=500)
            assert code == "bad_request" and "0..3" in msg
    for actuator in ("plate", "lane", "lift_up", "lift_down"):
        for ms in (0, -5, 2001):
            code, msg = _jog(link, token, actuator=actuator, n=1, ms=ms)
            assert code == "bad_request" and "1..2000" in msg
    assert _jog(link, token, actuator="lift", n=1, ms=500)[0] == "bad_request"


def test_a_jog_without_its_time_or_actuator_never_reaches_the_service():
    from firmware import frame
    from firmware.link import codec
    for payload in (b'{"op":"jog","actuator":"lane","n":1}',      # no time
                    b'{"op":"jog","n":1,"ms":500}'):               # no actuator
        r = frame.FrameReader()
        r.feed(frame.encode(0x10, 1, payload))
        assert r.ready
        try:
            codec.decode_request(r)
            raise AssertionError("decoded %r" % payload)
        except LinkError as e:
            assert e.code == "bad_request" and "missing" in e.message


@_cleaned
def test_a_refused_jog_is_logged_with_its_details_and_moves_nothing():
    link = _Link(KEY)
    token = _session(link)
    assert _jog(link, token, actuator="lane", ms=500)[0] == "bad_request"
    assert _jog(link, token, actuator="lift_up", n=7, ms=500)[0] == "bad_request"
    assert _jog(link, token, actuator="plate", ms=9000)[0] == "bad_request"
    assert _jog(link, token, actuator="lift", n=2, ms=999999)[0] == "bad_request"
    assert _log(link)[-4:] == [[10, "jog", "lane", None, 500, "bad_request"],
                               [10, "jog", "lift_up", 7, 500, "bad_request"],
                               [10, "jog", "plate", None, 9000, "bad_request"],
                               [10, "jog", "lift", 2, 999999, "bad_request"]]
