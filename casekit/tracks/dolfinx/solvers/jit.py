"""Forms compiled by FFCx and the C compiler into a plain shared library, loaded with cffi's
``dlopen`` (ABI mode): no setuptools, no Python extension module.

``ffcx.codegeneration.jit.compile_forms`` (what ``dolfinx.fem.form`` calls) builds an API-mode
cffi extension through setuptools: importing setuptools and running its build command cost
about 0.3 s of every fresh run, and the generated Python wrapper doubles what the compiler
reads.  The kernels need neither: DOLFINx reads the ``ufcx_form`` structs through their address.
This module compiles FFCx's code alone, with the flags DOLFINx's JIT uses (``-O2 -g0``, C17),
and reads the structs from the library (a 3-D convection-diffusion form pair: 0.37 s of
compilation down to 0.13 s).  Every run starts with an empty cache, so nothing is looked up or
kept.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import cffi
import ffcx.codegeneration
import ffcx.compiler
import ffcx.naming
import ffcx.options
import numpy as np
from ffcx.codegeneration.C.file_template import libraries as LIBRARIES
from ffcx.codegeneration.jit import UFC_FORM_DECL, UFC_HEADER_DECL, UFC_INTEGRAL_DECL

#: DOLFINx's JIT flags (dolfinx.jit: -O2 -g0), in C17 as FFCx compiles
FLAGS = ("-fno-strict-overflow", "-DNDEBUG", "-O2", "-g0", "-std=c17", "-fPIC", "-shared")
_serial = itertools.count()
#: every library loaded, for the life of the process: DOLFINx's forms keep the address of a
#: struct inside it, not the cffi handle, so a collected handle would unload code still in use
_LOADED: list[Any] = []


class CompileError(RuntimeError):
    pass


def compile_forms(forms: list[Any], options: dict[str, Any]) -> tuple[list[Any], SimpleNamespace, str]:
    """(ufcx forms, module, C code) of ``forms`` compiled into one library; ``module`` has the
    ``ffi`` and ``lib`` that ``dolfinx.fem.forms.create_form`` reads."""
    p = ffcx.options.get_options(options)
    name = f"casekit_forms_{os.getpid()}_{next(_serial)}"
    names = [ffcx.naming.form_name(form, i, name) for i, form in enumerate(forms)]
    code, _ = ffcx.compiler.compile_ufl_objects(forms, namespace=name, options=p)
    library = build(name, code[1])
    ffi = cffi.FFI()
    ffi.cdef(UFC_HEADER_DECL.format(np.dtype(p["scalar_type"]).name) + UFC_INTEGRAL_DECL + UFC_FORM_DECL
             + "".join(f"extern ufcx_form {n};\n" for n in names))
    lib = ffi.dlopen(str(library))
    _LOADED.append((ffi, lib))
    return [getattr(lib, n) for n in names], SimpleNamespace(ffi=ffi, lib=lib), code[1]


def build(name: str, body: str) -> Path:
    """The shared library of C ``body`` (FFCx's code, which includes ``ufcx.h``)."""
    work = Path(tempfile.mkdtemp(prefix="casekit-jit-"))
    source, target = work / f"{name}.c", work / f"{name}.so"
    source.write_text(body)
    cmd = [sysconfig.get_config_var("CC").split()[0], *FLAGS, f"-I{ffcx.codegeneration.get_include_path()}",
           str(source), "-o", str(target), *(f"-l{lib}" for lib in LIBRARIES)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CompileError(f"compiling the forms failed ({' '.join(cmd)}): {r.stderr[-3000:]}")
    return target
