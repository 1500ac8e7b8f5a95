"""Progress of a sweep on stderr: a tqdm bar when tqdm is installed, plain lines otherwise.

``progress=None`` (default): shown only when stderr is a terminal, and only once the sweep
has run for more than a second (short sweeps stay silent).  ``True``: always shown, from the
start (without tqdm: one line per ~2 seconds and a final line).  ``False``: never.
"""
from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["Progress", "make_progress"]

_DELAY = 1.0        # seconds before an automatic bar appears
_LINE_EVERY = 2.0   # seconds between plain progress lines


class Progress:
    """Silent progress (``progress=False``, or not a terminal); the base of the visible kinds."""

    def update(self, points: int) -> None:
        pass

    def close(self) -> None:
        pass


class _Tqdm(Progress):
    def __init__(self, total: int, desc: str, delay: float, initial: int) -> None:
        from tqdm import tqdm  # type: ignore[import-untyped, unused-ignore]

        self._bar: Any = tqdm(total=total, desc=desc, unit="pt", unit_scale=True, delay=delay, initial=initial,
                              file=sys.stderr, dynamic_ncols=True)

    def update(self, points: int) -> None:
        self._bar.update(points)

    def close(self) -> None:
        self._bar.close()


class _Lines(Progress):
    def __init__(self, total: int, desc: str, delay: float, initial: int) -> None:
        self.total, self.desc, self.done = total, desc, initial
        self.start = time.monotonic()
        self.next = self.start + delay
        self.shown = False

    def _line(self) -> None:
        elapsed = time.monotonic() - self.start
        pct = 100.0 * self.done / self.total if self.total else 100.0
        sys.stderr.write(f"{self.desc}: {self.done}/{self.total} points ({pct:.1f}%), {elapsed:.1f} s\n")
        sys.stderr.flush()
        self.shown = True

    def update(self, points: int) -> None:
        self.done += points
        now = time.monotonic()
        if now >= self.next:
            self._line()
            self.next = now + _LINE_EVERY

    def close(self) -> None:
        if self.shown or self.next <= self.start:
            self._line()


def make_progress(progress: bool | None, total: int, desc: str, initial: int = 0) -> Progress:
    """The progress display that ``progress`` asks for (see the module docstring)."""
    if progress is False:
        return Progress()
    if progress is None:
        isatty = getattr(sys.stderr, "isatty", None)
        if not (isatty is not None and isatty()):
            return Progress()
        delay = _DELAY
    else:
        delay = 0.0
    try:
        import tqdm  # noqa: F401
    except ImportError:
        return _Lines(total, desc, delay, initial)
    return _Tqdm(total, desc, delay, initial)
