"""Stopping a sweep cleanly: Ctrl-C (SIGINT), SIGTERM and SIGHUP.

SIGTERM is what Slurm, Kubernetes and systemd send before they kill a job; SIGHUP is what a
closed terminal sends.  Inside :func:`deferred_interrupts` (main thread only) the first of
these signals only sets a flag.  The engines read it between chunks (the point-wise
quantities also between points) and stop; the sweep then saves its finished chunks, writes
its manifest and removes its temporary files (see :mod:`dpbounds.sweeps._store`).  Then:

* SIGINT: ``KeyboardInterrupt`` is raised, as Python does by default;
* SIGTERM, SIGHUP: the signal's default action is restored and the signal sent again, so the
  process ends as it would have without the sweep -- killed by that signal, the status a job
  scheduler expects -- only after the cleanup.

A second signal (any of the three) stops at once where the program is; the cleanup still runs.
Only signals whose handler is the default one are taken over: a handler someone else installed
(a notebook, a test runner, the program's own SIGTERM handler) is left to do its job.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from types import FrameType
from typing import Any, Callable, Iterator

# the C functions behind signal.getsignal/signal.signal: those wrap every handler in and out of
# an IntEnum, most of the ~30 us a sweep spent taking the signals over and giving them back
_getsignal: Callable[[int], Any] = signal.getsignal
_setsignal: Callable[[int, Any], Any] = signal.signal
try:
    import _signal  # type: ignore[import-not-found, unused-ignore]

    _getsignal, _setsignal = _signal.getsignal, _signal.signal
except ImportError:  # pragma: no cover - a Python without the _signal module
    pass

__all__ = ["Interrupts", "Terminated", "deferred_interrupts"]


class Terminated(BaseException):
    """A SIGTERM or SIGHUP stopped the sweep (re-sent to the process once the sweep has cleaned up)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_TERMINATING: tuple[int, ...] = tuple(int(getattr(signal, name)) for name in ("SIGTERM", "SIGHUP")
                                     if hasattr(signal, name))


class Interrupts:
    """The flag set by the first signal: which one, or 0."""

    def __init__(self) -> None:
        self.signum = 0

    @property
    def requested(self) -> bool:
        return self.signum != 0

    def raise_for(self, signum: int) -> None:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise Terminated(signum)

    def check(self) -> None:
        """Raise KeyboardInterrupt (SIGINT) or :class:`Terminated` if a signal came since the sweep started."""
        if self.signum:
            self.raise_for(self.signum)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[Interrupts]:
    """Defer SIGINT, SIGTERM and SIGHUP to the engines' checks for the duration of the block.

    A :class:`Terminated` leaving the block ends the process by its signal (after the block's
    own cleanup has run), unless the signal's default action is not to terminate.
    """
    flag = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield flag   # signal handlers can only be installed by the main thread
        return
    # the signals whose handler is still Python's default: only those are taken over
    taken: dict[int, Any] = {}
    if _getsignal(signal.SIGINT) is signal.default_int_handler:
        taken[signal.SIGINT] = signal.default_int_handler
    for signum in _TERMINATING:
        previous = _getsignal(signum)
        if previous == signal.SIG_DFL:
            taken[signum] = previous   # (as _setsignal takes it back: a plain int, not the IntEnum)

    def handler(signum: int, frame: FrameType | None) -> None:
        if flag.signum:   # the second signal: stop now, where the program is
            flag.raise_for(signum)
        flag.signum = signum

    for signum in taken:
        _setsignal(signum, handler)
    terminated: Terminated | None = None
    try:
        yield flag
    except Terminated as exc:
        terminated = exc
    finally:
        for signum, previous in taken.items():
            _setsignal(signum, previous)
    if terminated is not None:
        signum = terminated.signum
        if taken.get(signum) == signal.SIG_DFL:
            signal.raise_signal(signum)   # the default action: the process ends here
        # not ours to end (or the signal did not end it): leave as SystemExit would
        raise SystemExit(128 + signum)
