"""The preview benchmark's helpers (rec11_tools.previewtime): the servers the tests start listen on ports
that nothing else is handed meanwhile, and a save is timed only once the preview is idle."""

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


def test_the_preview_is_idle_only_when_every_build_it_started_has_ended(tmp_path):
    log = tmp_path / "_build" / "preview-bench.log"
    log.parent.mkdir()
    lines = ["preview: rebuilt in 0.8 s", "preview: changed book/a.md", "Running Jupyter-Book",
             "preview: rebuilt in 1.3 s", "preview: changed book/a.md"]
    for shown, idle in [(1, True), (2, False), (4, True), (5, False)]:
        log.write_text("\n".join(lines[:shown]) + "\n")
        assert previewtime.idle(tmp_path) is idle, lines[:shown]
