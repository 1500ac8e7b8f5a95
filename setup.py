"""Extension list only; metadata lives in pyproject.toml.

Every ``src/dpbounds/**/_*.pyx`` becomes an extension module linked with all of
``csrc/*.c`` (pure C99, no Python).  Set DPBOUNDS_DEBUG=1 to keep debug info.
"""
import glob
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = sorted(glob.glob("csrc/*.c"))
CHEADERS = sorted(glob.glob("csrc/*.h"))

compile_args, link_libs = [], []
if sys.platform != "win32":
    compile_args = ["-O3", "-std=c99", "-fno-math-errno", "-fvisibility=hidden"]
    if not os.environ.get("DPBOUNDS_DEBUG"):
        compile_args.append("-g0")
    link_libs = ["m"]
    if sys.platform.startswith("linux"):
        link_libs.append("dl")  # dlopen of libmvec (csrc/dpb_vecmath.c); part of libc on glibc >= 2.34

extensions = []
for pyx in sorted(glob.glob("src/dpbounds/**/_*.pyx", recursive=True)):
    modname = os.path.splitext(os.path.relpath(pyx, "src"))[0].replace(os.sep, ".")
    extensions.append(
        Extension(
            modname,
            sources=[pyx] + CSRC,
            depends=CHEADERS + sorted(glob.glob("src/dpbounds/**/*.pxd", recursive=True)),
            include_dirs=["csrc", np.get_include()],
            define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_22_API_VERSION")],
            extra_compile_args=compile_args,
            libraries=link_libs,
        )
    )

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "embedsignature": False,
        },
    )
)
