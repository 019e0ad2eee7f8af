"""The link fuzz on a live link: a burst of mutants down a LinkClient's
line, then a `status` that must be answered (hw_tests/test_link.py, the
soak between hands)."""

from host_tools.qa.linkfuzz.mutants import mutants


def live_burst(link, rng, n):
    """n mutants on a live LinkClient's line, then a status request (raises
    LinkError if it is not answered). Returns the status answer."""
    link.send_raw(b"".join(mutants(rng, n, link.seq + 128)))
    return link.request("status")
