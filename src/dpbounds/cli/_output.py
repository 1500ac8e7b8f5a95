"""Everything the command line writes: JSON, aligned tables, output files and exit statuses.

JSON is always valid JSON (``allow_nan=False``): a non-finite number -- inf where no answer
exists, NaN where a bound does not apply -- is written as ``null``, so any JSON reader takes
the output.  Text tables keep ``inf`` / ``nan`` readable.
"""
from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from dpbounds._errors import DPBoundsError

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_NOT_VALID",
    "EXIT_OK",
    "EXIT_TOLERANCE_MISSED",
    "Column",
    "emit_json",
    "jsonable",
    "print_table",
    "writing",
]

EXIT_OK = 0
#: no answer exists at the parameters asked about (Theorem 3.1 does not apply, no M, no noise
#: multiplier meets the target); the reason is printed
EXIT_NOT_VALID = 1
#: bad input (one line on stderr)
EXIT_ERROR = 2
#: an answer is printed but its certified bracket is wider than the tolerance asked for
EXIT_TOLERANCE_MISSED = 3
#: Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130
#: the reader of stdout went away (``dpbounds ... | head``; 128 + SIGPIPE)
EXIT_BROKEN_PIPE = 141


def jsonable(value: Any) -> Any:
    """``value`` with numpy scalars made Python numbers, tuples made lists and non-finite floats ``None``."""
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else None
    return value


def emit_json(value: Any) -> None:
    """Print ``value`` as JSON; non-finite numbers become ``null`` (never ``NaN``/``Infinity``)."""
    print(json.dumps(jsonable(value), indent=2, allow_nan=False))


@dataclass(frozen=True)
class Column:
    """One column of a text table: header, width, alignment and how a row's cell becomes text."""

    header: str
    text: Callable[[Mapping[str, Any]], str]
    width: int = 0
    align: str = ">"
    #: spaces before the column (ignored for the first one)
    gap: int = 1


def print_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> None:
    """Print a header line and one aligned line per row."""

    def line(cells: Sequence[str]) -> str:
        parts = []
        for i, (col, cell) in enumerate(zip(columns, cells)):
            parts.append(("" if i == 0 else " " * col.gap) + f"{cell:{col.align}{col.width}}")
        return "".join(parts).rstrip()

    print(line([c.header for c in columns]))
    for row in rows:
        print(line([c.text(row) for c in columns]))


@contextlib.contextmanager
def writing(path: str, option: str) -> Iterator[None]:
    """Turn a failure to write ``path`` (missing folder, no permission, ...) into one-line ValueError."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise DPBoundsError(f"cannot write {option} {path!r}: {reason}") from None
