"""Ctrl-C during a sweep: finish the chunk at hand, write it, then stop.

Inside :func:`deferred_interrupts` (main thread only) the first SIGINT only sets a flag, which
the engines read between chunks (:meth:`Interrupts.check` raises ``KeyboardInterrupt`` there),
so the output file ends at a chunk boundary and its manifest says exactly which chunks are
done.  A second SIGINT interrupts at once (the default behaviour): for a chunk that takes too
long; the writer is still closed and the file still holds every chunk finished before.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Any, Iterator

__all__ = ["Interrupts", "deferred_interrupts"]


class Interrupts:
    """The flag set by the first Ctrl-C."""

    def __init__(self) -> None:
        self.requested = False

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C was pressed since the sweep started."""
        if self.requested:
            raise KeyboardInterrupt


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[Interrupts]:
    flag = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield flag   # signal handlers can only be installed by the main thread
        return
    previous: Any = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield flag   # someone else (a notebook, a test runner) handles SIGINT: leave it to them
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if flag.requested:   # the second Ctrl-C: stop now
            raise KeyboardInterrupt
        flag.requested = True

    signal.signal(signal.SIGINT, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGINT, previous)
