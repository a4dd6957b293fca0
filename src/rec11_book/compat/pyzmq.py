"""What the build relies on in pyzmq (pinned 27.3.0): the error a kernel logs of its own as it is shut down."""

from __future__ import annotations

from rec11_book.compat import lacks_text, reliance

_LOGGED = "Uncaught exception in ZMQStream callback"


@reliance(probe=lambda: lacks_text("zmq", _LOGGED))
def kernel_shutdown_error(plain: str) -> bool:
    """Whether a printed line (without colours) starts the error a kernel can log of its own
    while it is shut down; its traceback follows, ending in the exception's line.

    Relies on: the text pyzmq's ``ZMQStream`` logs (through tornado's ``tornado.general``
    logger, with the traceback) when a callback raises, "Uncaught exception in ZMQStream
    callback". An ipykernel that nbclient shuts down after a failing cell can raise there,
    ``ZMQError: Socket operation on non-socket``, and its standard error is the build's
    (ipykernel 7.4.0, from the standard-error flush in ``process_control``; ipykernel's pull
    request 1518 catches the same race on the status message's path only).
    Package: pyzmq. Checked against: 27.3.0.
    Public alternative: none: the kernel's standard error is inherited, and quietening its
    loggers would hide a kernel's real failures too.
    """
    return plain.rstrip().endswith(_LOGGED)
