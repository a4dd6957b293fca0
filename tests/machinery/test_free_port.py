"""The servers the tests start listen on ports that nothing else is handed meanwhile."""

import socket

from rec11_tools import previewtime


def test_a_free_port_lies_below_the_range_the_system_hands_out_and_is_free():
    low = previewtime._ephemeral_low()
    for _ in range(50):
        port = previewtime.free_port()
        assert previewtime.PORTS_FROM <= port < low
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free: the server can take it


def test_a_port_in_use_is_never_returned(monkeypatch):
    free = previewtime.free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", previewtime.free_port()))
        taken.listen()
        busy = taken.getsockname()[1]
        # the busy port is drawn first: it must be passed over for the next
        monkeypatch.setattr(previewtime.random, "sample", lambda population, k: [busy, free])
        assert previewtime.free_port() == free
