"""Read a memcheck log of .ci/valgrind_workload.py and decide which errors are ours.

usage: python .ci/valgrind_triage.py LOG OUR_DIR...

Exit status 0 when every reported error is CPython 3.11's small-int taint (below) and no error
stack or origin touches our code; 1 otherwise, printing each remaining error in full.

CPython 3.11's ``_PyLong_New(0)`` (int.from_bytes, int("0"), ``x & 0`` ... of a zero value)
allocates one digit and leaves it unwritten; ``maybe_small_long`` then indexes the small-int
table with ``digit * size`` (size 0).  The result is right, but memcheck marks the *pointer* to
the small int 0 as undefined, and every later Py_INCREF / Py_DECREF of that pointer -- anywhere:
import machinery, dict teardown, the garbage collector at exit -- is reported, in as many
contexts as there are places that hold a 0.  Suppressions by innermost frames cannot name them
all (they move with whichever modules happen to be imported), so the run uses
``--track-origins=yes`` and this script accepts exactly the errors whose uninitialised value
was created by ``_PyLong_New``'s allocation and whose stacks run through no frame of ours.
CPython 3.12 initialises the digit, and these disappear.

Anything else -- an invalid read or write, a leak, an uninitialised value born anywhere else, or
any error with a frame in our shared objects or sources -- is reported.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_PREFIX = re.compile(r"^==\d+== ?")
_FRAME = re.compile(r"^\s+(?:at|by) 0x[0-9A-Fa-f]+: (.*)$")
_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts")


@dataclass
class Error:
    kind: str
    stack: list[str] = field(default_factory=list)
    origin_kind: str = ""
    origin: list[str] = field(default_factory=list)

    def text(self) -> str:
        lines = [self.kind] + ["   " + f for f in self.stack]
        if self.origin_kind:
            lines += [" " + self.origin_kind] + ["   " + f for f in self.origin]
        return "\n".join(lines)


def parse(log: str) -> tuple[list[Error], tuple[int, int] | None]:
    """The error records of a memcheck log (the first occurrence of each context) and the
    final ERROR SUMMARY's (errors, contexts)."""
    errors: list[Error] = []
    current: Error | None = None
    in_origin = False
    summary = None
    for raw in log.splitlines():
        if not _PREFIX.match(raw):
            continue  # the workload's own output
        line = _PREFIX.sub("", raw)
        m = _SUMMARY.search(line)
        if m:
            summary = (int(m.group(1)), int(m.group(2)))
            continue
        if not line.strip():
            current, in_origin = None, False
            continue
        frame = _FRAME.match(line)
        if current is not None:
            if frame:
                (current.origin if in_origin else current.stack).append(frame.group(1))
            elif line.startswith(" ") and "was created by" in line:
                current.origin_kind, in_origin = line.strip(), True
            continue
        # a record starts with an unindented description line followed by frames; the header,
        # the heap and leak summaries have no frames and are discarded below
        if not line.startswith(" "):
            current = Error(line.strip())
            errors.append(current)
    return [e for e in errors if e.stack], summary


def ours(frames: list[str], markers: list[str]) -> bool:
    return any(mk in f for f in frames for mk in markers)


def is_cpython_small_int_taint(e: Error, markers: list[str]) -> bool:
    if not e.origin_kind.startswith("Uninitialised value was created by a heap allocation"):
        return False
    allocator = [f for f in e.origin if not re.match(r"(malloc|realloc|calloc|PyMem_\w+|PyObject_\w+alloc\w*|_PyObject_\w+)\b", f)]
    return (bool(allocator) and allocator[0].startswith("_PyLong_New ")
            and not ours(e.stack, markers) and not ours(e.origin, markers))


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    log = Path(argv[0]).read_text(errors="replace")
    # our code: the shared objects under the given directories and the C sources they are built from
    markers = [d.rstrip("/") + "/" for d in argv[1:]]
    for d in argv[1:]:
        for src in list(Path(d).rglob("*.c")) + list(Path(d).rglob("*.pyx")):
            markers.append(f"({src.name}:")
    errors, summary = parse(log)
    if summary is None:
        print("valgrind triage: no ERROR SUMMARY in the log (did memcheck finish?)")
        return 1
    if len(errors) != summary[1]:
        print(f"valgrind triage: parsed {len(errors)} error records but the summary counts "
              f"{summary[1]} contexts; refusing to guess")
        return 1
    taint = [e for e in errors if is_cpython_small_int_taint(e, markers)]
    rest = [e for e in errors if not is_cpython_small_int_taint(e, markers)]
    print(f"valgrind triage: {summary[0]} errors in {summary[1]} contexts; "
          f"{len(taint)} contexts are CPython 3.11's small-int taint (origin _PyLong_New, no frame of ours); "
          f"{len(rest)} other")
    for e in rest:
        print("---- not accepted ----\n" + e.text())
    return 1 if rest else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
