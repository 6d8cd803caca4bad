"""The CUDA sources see every constant of swath.constants with its Python value."""

from __future__ import annotations

import numpy as np
import pytest

from swath.constants import cuda_macros

pytestmark = pytest.mark.gpu


def macro_values_source(names: list[str]) -> str:
    """A kernel that writes the value of each macro of ``names``, in order, as int64."""
    stores = "".join(f"    out[{k}] = (long long)({name});\n" for k, name in enumerate(names))
    return f'extern "C" __global__ void macro_values(long long* out) {{\n{stores}}}\n'


def test_compiled_kernels_see_the_python_values() -> None:
    import cupy as cp

    from swath.kernels.gpu._cuda import OPTIONS

    macros = cuda_macros()
    names = list(macros)
    out = cp.zeros(len(names), dtype=np.int64)
    cp.RawKernel(macro_values_source(names), "macro_values", options=OPTIONS)((1,), (1,), (out,))
    assert dict(zip(names, out.get().tolist(), strict=True)) == macros
