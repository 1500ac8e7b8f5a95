"""Extension list only; metadata lives in pyproject.toml.

The C core (``csrc/*.c``, pure C99, no Python) is compiled ONCE into the static library
``dpbcore`` and linked into the two extension modules: ``dpbounds._ufuncs`` (generated from
``src/dpbounds/_ufunc_table.py`` by ``tools/gen_ufuncs.py``) and ``dpbounds._kernels``
(hand-written, non-elementwise code: ``_kernels.pyx`` and the ``_kernels_*.pxi`` files it
includes).  Set DPBOUNDS_DEBUG=1 to keep debug info.
"""
import glob
import os
import shlex
import subprocess
import sys
import sysconfig

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CSRC = sorted(glob.glob("csrc/*.c"))
CHEADERS = sorted(glob.glob("csrc/*.h"))
if sys.platform == "win32":
    # MSVC's C has no complex arithmetic: that one file is compiled as C++ there (see its header)
    CSRC = [s.replace("dpb_exact_cf.c", "dpb_exact_cf_msvc.cpp") for s in CSRC]
    CHEADERS.append(os.path.join("csrc", "dpb_exact_cf.c"))  # included by the .cpp


def _compiler_is_clang():
    """Whether the C compiler setuptools will run is clang (macOS's ``cc``/``gcc`` are clang)."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    try:
        macros = subprocess.run(cc + ["-dM", "-E", "-x", "c", os.devnull], capture_output=True, text=True,
                                check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    return "__clang__" in macros


compile_args, link_args, link_libs = [], [], []
if sys.platform != "win32":
    compile_args = ["-O3", "-std=c99", "-fno-math-errno", "-fvisibility=hidden"]
    if _compiler_is_clang():
        # by default clang may evaluate floating-point operations speculatively (both sides of
        # a branch), raising the overflow flag the branch avoids and numpy turns into a warning
        # (28 failures of tests/ with clang 14 without it); GCC's default -ftrapping-math does not
        compile_args.append("-ffp-exception-behavior=maytrap")
    if not os.environ.get("DPBOUNDS_DEBUG"):
        compile_args.append("-g0")
        if sys.platform.startswith("linux"):
            link_args = ["-Wl,-s"]  # no symbol table in the shipped .so (-10% size); GNU ld, gold and lld
    link_libs = ["m"]
    if sys.platform.startswith("linux"):
        link_libs.append("dl")  # dlopen of libmvec (csrc/dpb_vecmath.c); part of libc on glibc >= 2.34

DPBCORE = ("dpbcore", {"sources": CSRC, "include_dirs": ["csrc"], "cflags": compile_args, "obj_deps": {"": CHEADERS}})


class BuildExtWithCore(build_ext):
    """``build_ext`` that builds the static C core first (``build_ext --inplace`` alone would not)."""

    def run(self):
        self.run_command("build_clib")
        clib = self.get_finalized_command("build_clib")
        lib = os.path.join(clib.build_clib, clib.compiler.library_filename("dpbcore"))
        for ext in self.extensions:  # relink when the core changes
            ext.depends = list(ext.depends) + [lib]
        super().run()


# what each module includes besides the C headers: a change to any of them rebuilds it (cythonize
# follows the include statements as well; this also covers a build that reuses the generated C)
KERNELS_PXI = sorted(glob.glob("src/dpbounds/_kernels_*.pxi"))

extensions = [
    Extension(
        name,
        sources=[pyx],
        depends=CHEADERS + ["src/dpbounds/_core.pxd", "src/dpbounds/_interrupt.pxd"] + extra,
        include_dirs=["csrc", np.get_include()],
        # NPY_TARGET_VERSION: the oldest numpy these modules run on (pyproject's numpy>=1.25; numpy
        # 2.x headers otherwise pick a default that changes with the numpy in the build environment)
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_22_API_VERSION"), ("NPY_TARGET_VERSION", "NPY_1_25_API_VERSION")],
        extra_compile_args=compile_args,
        extra_link_args=link_args,
        # dpbcore first so its references to libm resolve; build_ext appends it once more (harmless)
        libraries=["dpbcore"] + link_libs,
    )
    for name, pyx, extra in (("dpbounds._ufuncs", "src/dpbounds/_ufuncs.pyx", []),
                             ("dpbounds._kernels", "src/dpbounds/_kernels.pyx", KERNELS_PXI))
]

setup(
    libraries=[DPBCORE],
    cmdclass={"build_ext": BuildExtWithCore},
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "embedsignature": False,
        },
    ),
)
