"""Build dpbounds with its compiled code coverage-instrumented for libFuzzer, in a separate directory.

    python fuzz/build_native.py                       # -> build/fuzz-native (ASan + UBSan too)
    python fuzz/build_native.py --out DIR --no-sanitizers
    python fuzz/run.py --native-coverage              # the gate against it (fuzz/run.py)

The normal build gives atheris coverage feedback from the Python layer only: the C core
(``csrc/``) and the two Cython extensions are compiled without coverage instrumentation, so the
fuzzer cannot tell when an input reaches a new branch of a kernel.  This script compiles a copy of
the checkout (``setup.py``, ``pyproject.toml``, ``README.md``, ``csrc/``, ``src/``; the checkout itself
and its in-place build are not touched) with clang and ``-fsanitize=fuzzer-no-link`` (by default
also ``address,undefined``, so that the fuzzer stops at the first memory error or undefined
behaviour in the compiled code), keeping the shipped optimisation (-O3) and debug info (for
libFuzzer's ``-print_coverage`` report).  Stack-depth and comparison tracing are left out: they
vary with the process's randomised placement in memory; and the compiled loops' Ctrl-C watch
sizes its blocks by element count, not by the clock.  fuzz/run.py's gate must repeat itself
(:data:`COVERAGE_EXTRA`).

The instrumented modules call libFuzzer's coverage hooks (``__sanitizer_cov_*``) from the moment
they are loaded, before atheris loads its own libFuzzer, so those symbols must already be in the
process: the script also links clang's ``libclang_rt.fuzzer_no_main`` (with the ASan runtime, whose
UBSan handlers come with it, unless ``--no-sanitizers``) into one shared object that
``fuzz/run.py`` preloads (``LD_PRELOAD``).  This is what atheris' own "asan_with_fuzzer.so" is (see
its native_extension_fuzzing.md); its binary wheels do not ship that file, so it is built here
from the clang that compiles the extensions.

``DIR/manifest.json`` records the sanitizers, the preload and a digest of the sources; fuzz/run.py
refuses a build whose sources have changed since.  Linux only (``LD_PRELOAD``); needs clang with
its compiler-rt (Debian/Ubuntu: the ``clang`` package), Cython and numpy.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "fuzz-native"
# what setup.py reads: the build runs in a copy holding exactly these
COPIED = ("setup.py", "pyproject.toml", "README.md", "csrc", "src")
_METADATA = ("pyproject.toml", "README.md")
# build products and caches (the checkout may have its own in-place build; Cython writes its .c
# and .html next to the .pyx in src/, where no C source lives)
_SKIPPED_SUFFIXES = (".so", ".pyd", ".pyc", ".o", ".a")
_SKIPPED_IN_SRC = (".c", ".html")
SANITIZERS = "address,undefined"
# Two kinds of coverage that -fsanitize=fuzzer-no-link turns on are left out, because they depend
# on where the process sits in memory (address-space randomisation), so that the same input would
# make the fuzzer act differently from run to run and fuzz/run.py's gate would not repeat itself:
# - stack-depth: its feature is the deepest stack offset an input reaches, which moves with the
#   stack's randomised alignment;
# - trace-cmp: the operands of integer comparisons go into libFuzzer's table of recent
#   comparisons, which its mutations copy into inputs, and the compiled Cython code compares
#   pointers (type checks, Py_None): addresses.  (Comparisons of doubles, the kernels' branches,
#   are not traced anyway; the Python layer's comparisons still are, by atheris.)
# And the compiled loops' Ctrl-C watch (src/dpbounds/_interrupt.pxd) sizes its blocks by the
# clock, so the hit counts of those loops' edges varied with the speed and the load:
# DPB_WATCH_BY_COUNT sizes them by the element count instead (the values are the same).
COVERAGE_EXTRA = "-fno-sanitize-coverage=stack-depth,trace-cmp -DDPB_WATCH_BY_COUNT"
# The preload's runtime must not run its own pre-init (atheris' merge script drops these objects
# too): the interpreter is not instrumented and the runtime initialises when it is loaded.
_PREINIT = {"asan": "asan_preinit.cpp.o asan_preinit.cc.o"}

__all__ = ["COVERAGE_EXTRA", "DEFAULT_OUT", "source_digest", "build", "main"]


def _source_files(root: Path) -> list[Path]:
    """The files of the build's inputs under ``root``, sorted (build products excluded)."""
    files = []
    for name in COPIED:
        p = root / name
        if p.is_file():
            files.append(p)
            continue
        for f in sorted(p.rglob("*")):
            if not f.is_file() or "__pycache__" in f.parts or f.name.endswith(_SKIPPED_SUFFIXES):
                continue
            if name == "src" and f.name.endswith(_SKIPPED_IN_SRC):
                continue
            files.append(f)
    return sorted(files)


def source_digest(root: Path) -> str:
    """SHA-256 over the relative paths and contents of the build's inputs in ``root``.

    The package metadata (pyproject.toml, README.md) is left out: it changes no compiled code.
    """
    h = hashlib.sha256()
    for f in _source_files(root):
        if f.parent == root and f.name in _METADATA:
            continue
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _run(cmd: list[str], log: Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    if proc.returncode != 0:
        tail = log.read_text().splitlines()[-40:]
        sys.exit("\n".join(tail) + f"\nfailed (exit {proc.returncode}): {' '.join(cmd)}\nlog: {log}")


def _runtime(clang: str, name: str) -> Path:
    """Path of clang's compiler-rt archive ``libclang_rt.<name>-<arch>.a``."""
    arch = platform.machine()
    out = subprocess.run([clang, f"-print-file-name=libclang_rt.{name}-{arch}.a"], capture_output=True,
                         text=True, check=True).stdout.strip()
    if not os.path.isabs(out) or not os.path.exists(out):
        sys.exit(f"clang has no libclang_rt.{name}-{arch}.a (compiler-rt is not installed for {clang})")
    return Path(out)


def _preload(clang: str, sanitize: bool, out: Path, log: Path) -> Path:
    """One shared object with libFuzzer (and the ASan+UBSan runtime): what run.py preloads."""
    parts = [_runtime(clang, "fuzzer_no_main")]
    if sanitize:
        asan = out / "asan.a"
        shutil.copyfile(_runtime(clang, "asan"), asan)
        # ar d names members that may not exist (.cc in old compiler-rt, .cpp in new): no error
        _run(["ar", "d", str(asan), *_PREINIT["asan"].split()], log)
        parts.append(asan)
    target = out / ("asan_with_fuzzer.so" if sanitize else "libfuzzer.so")
    clangxx = shutil.which(clang + "++") or clang.replace("clang", "clang++")
    _run([clangxx, "-shared", "-o", str(target), "-Wl,--whole-archive", *map(str, parts),
          "-Wl,--no-whole-archive", "-lpthread", "-ldl"], log)
    for p in parts[1:]:
        p.unlink()
    return target


def _undefined(so: Path, prefix: str) -> int:
    """How many undefined dynamic symbols of ``so`` start with ``prefix``."""
    out = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True,
                         check=True).stdout
    return sum(line.split()[-1].startswith(prefix) for line in out.splitlines() if line.strip())


def build(out: Path, clang: str = "clang", sanitize: bool = True, jobs: int = 2) -> dict[str, str]:
    """Copy the checkout's sources to ``out/src``, build them instrumented there, write the manifest."""
    if not sys.platform.startswith("linux"):
        sys.exit("the instrumented build is preloaded with LD_PRELOAD: Linux only")
    if shutil.which(clang) is None:
        sys.exit(f"{clang} not found (the instrumentation needs clang)")
    out = out.resolve()
    if out == ROOT or ROOT in out.parents and out.parent != ROOT / "build":
        sys.exit(f"--out {out} would mix the build into the checkout's sources (use build/... or a directory outside)")
    t0 = time.monotonic()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "build.log"
    log.write_text("")
    copy = out / "src"
    if copy.exists():
        shutil.rmtree(copy)
    digest = source_digest(ROOT)
    for f in _source_files(ROOT):
        dest = copy / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, dest)
    flags = f"-fsanitize=fuzzer-no-link {COVERAGE_EXTRA}"
    link = ""
    if sanitize:
        # -fno-sanitize-recover: the first report ends the process, so libFuzzer saves the input
        flags += f" -fsanitize={SANITIZERS} -fno-omit-frame-pointer -fno-sanitize-recover=all"
        link = f"-fsanitize={SANITIZERS}"
    env = dict(os.environ, CC=clang, LDSHARED=f"{clang} -shared", CFLAGS=flags + " -g", LDFLAGS=link,
               DPBOUNDS_DEBUG="1")   # debug info and no stripping: -print_coverage names functions
    env.pop("PYTHONPATH", None)
    _run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", str(jobs)], log, env=env, cwd=copy)

    # every object must really be instrumented (a silently uninstrumented build would fuzz blind)
    text = log.read_text()
    sources = sorted(p.name for p in (copy / "csrc").glob("*.c"))
    if sources != sorted(p.name for p in (ROOT / "csrc").glob("*.c")):
        sys.exit(f"the copy's csrc/*.c differ from the checkout's ({copy})")
    compiled = [ln for ln in text.splitlines() if " -c csrc/" in ln and "fuzzer-no-link" in ln]
    missing = [s for s in sources if not any(f"csrc/{s} " in ln for ln in compiled)]
    if missing:
        sys.exit(f"compiled without -fsanitize=fuzzer-no-link: {missing} (log: {log})")
    modules = sorted((copy / "src" / "dpbounds").glob("_*.so"))
    if len(modules) != 2:
        sys.exit(f"expected the two extension modules, found {[m.name for m in modules]} (log: {log})")
    for so in modules:
        if _undefined(so, "__sanitizer_cov_8bit_counters_init") != 1:
            sys.exit(f"{so.name} is not coverage-instrumented (no __sanitizer_cov_8bit_counters_init)")
        if sanitize and _undefined(so, "__asan_report") == 0:
            sys.exit(f"{so.name} is not ASan-instrumented")
    preload = _preload(clang, sanitize, out, log)
    # the modules load and compute under the preload (catches unresolved symbols now, not per harness)
    smoke = dict(os.environ, LD_PRELOAD=str(preload), PYTHONPATH=str(copy / "src"), ASAN_OPTIONS="detect_leaks=0")
    _run([sys.executable, "-c", "import dpbounds; assert dpbounds.ufuncs.normal_pdf(0.0) > 0.39; "
          "from dpbounds import _kernels"], log, env=smoke, cwd=out)
    version = subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    manifest: dict[str, str] = {
        "source_root": str(ROOT), "source_digest": digest, "pythonpath": str(copy / "src"),
        "preload": str(preload), "sanitizers": SANITIZERS if sanitize else "", "clang": version,
        "python": sys.executable, "c_files": str(len(sources)), "coverage_extra": COVERAGE_EXTRA,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"instrumented build in {out} ({time.monotonic() - t0:.0f} s; {clang}: {version}): "
          f"{len(sources)} C files and {', '.join(m.name.split('.')[0] for m in modules)} with "
          f"-fsanitize=fuzzer-no-link{',' + SANITIZERS if sanitize else ''}; preload {preload.name}")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"build directory (default: {DEFAULT_OUT})")
    ap.add_argument("--clang", default=os.environ.get("CLANG", "clang"), help="the clang to build with")
    ap.add_argument("--no-sanitizers", action="store_true",
                    help="coverage instrumentation only, without ASan and UBSan (faster, finds less)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel compile jobs (default 2)")
    args = ap.parse_args(argv)
    build(args.out, args.clang, not args.no_sanitizers, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
