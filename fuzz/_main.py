"""Start one harness: instrument dpbounds' Python layer, then hand the test function to atheris.

Coverage guidance: ``atheris.instrument_imports`` rewrites the bytecode of every ``dpbounds``
module imported inside it (all of them are imported here, so that lazily imported ones are
instrumented too; one imported earlier would not be, which is refused).  The compiled core (the
C library and the Cython extensions) gives coverage feedback only when it is the instrumented
build of ``fuzz/build_native.py`` (``fuzz/run.py --native-coverage``); otherwise the fuzzer
exercises it through the Python entry points and catches its crashes, hangs and wrong results
without seeing its branches.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Callable

import atheris

__all__ = ["deterministic_counters", "instrument_dpbounds", "fuzz"]


def deterministic_counters() -> None:
    """Number atheris' coverage counters the same way in every process.

    atheris numbers the basic blocks of a function in the iteration order of a set of its
    bytecode instructions, which it hashes by ``id()``: the numbering then follows memory
    addresses, and differs from process to process.  libFuzzer breaks ties between features by
    their numbers (the entropic schedule's rare features), so two runs of the same inputs and
    seed could mutate differently.  Hashing an instruction by the order in which it is first
    hashed (the order atheris inserts it) makes the set's order, and the numbering, the same in
    every process.
    """
    import itertools

    from atheris import instrument_bytecode

    cls = getattr(instrument_bytecode, "Instruction", None)
    if cls is None or getattr(cls, "_dpbounds_deterministic", False):
        return
    serial = itertools.count()

    def __hash__(self: object) -> int:  # noqa: N807
        return self.__dict__.setdefault("_dpbounds_serial", next(serial))  # type: ignore[no-any-return]

    cls.__hash__ = __hash__
    cls._dpbounds_deterministic = True


def instrument_dpbounds() -> None:
    """Import every dpbounds module with atheris' bytecode instrumentation."""
    # a module imported before this point stays uninstrumented and the fuzzer is blind to it
    early = sorted(m for m in sys.modules if m == "dpbounds" or m.startswith("dpbounds."))
    if early:
        raise RuntimeError(f"imported before instrument_dpbounds(), so not coverage-instrumented: {early}")
    deterministic_counters()
    with atheris.instrument_imports(include=["dpbounds"]):
        import dpbounds

        for mod in pkgutil.walk_packages(dpbounds.__path__, "dpbounds."):
            try:
                importlib.import_module(mod.name)
            except ImportError:  # an optional dependency (matplotlib, pyarrow, dask) is absent
                pass


def fuzz(test_one_input: Callable[[bytes], None]) -> None:
    """Run libFuzzer on ``test_one_input`` with this process's command line (-max_total_time= ...).

    With ``DPBOUNDS_FUZZ_KEEP_GOING=1`` a finding is printed once per kind (its message up to the
    first digit) and the run goes on: a survey mode for triage.  By default the first finding
    stops the run and libFuzzer saves the input (``crash-<sha1>`` under ``-artifact_prefix``).
    """
    import os
    import re
    import shlex

    if os.environ.get("DPBOUNDS_FUZZ_KEEP_GOING") == "1":
        seen: set[str] = set()
        inner = test_one_input

        def test_one_input(data: bytes) -> None:
            try:
                inner(data)
            except AssertionError as exc:   # _contract.Finding
                key = re.split(r"[0-9(\[]", str(exc), maxsplit=1)[0][:120]
                if key not in seen:
                    seen.add(key)
                    print(f"FINDING {data.hex()} {exc}", flush=True)

    # libFuzzer's -merge (and -fork) re-run the command line through the shell, starting with
    # argv[0]: make that the interpreter and this script, not the script alone (not executable)
    argv = [shlex.join([sys.executable, os.path.abspath(sys.argv[0])]), *sys.argv[1:]]
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()
