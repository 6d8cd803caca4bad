"""The per-pair arithmetic of a batch's plans: CuPy elementwise kernels (a CUDA line or a
few each), one launch an operation.

# a pair: its query (m rows) against its target (n columns); values int64 unless said.

CuPy's operators on Python numbers (``a * 2``, ``a > 0``) and ``cupy.bincount`` import
cupyx.scipy on first use, a cost every process that aligns would pay: the plans use
these kernels and CuPy's functions instead.
"""

from __future__ import annotations

import functools

import cupy as cp

from swath.kernels.gpu._cuda import FILL_GROUPS, GROUP_SIZES

# The spill words of a group whose deepest query is m rows and longest target n columns:
# the H and F of a pass's last row, when a pass of ``pass_rows`` rows does not hold the
# query.
SPILL_RULE = "{m} > pass_rows ? 2 * (long long){n} : 0"


@functools.cache
def arithmetic() -> dict[str, cp.ElementwiseKernel]:
    """The elementwise kernels, by name (each compiled on its first launch)."""
    return {
        "ceil_div": cp.ElementwiseKernel("int64 a, int64 b", "int64 q", "q = (a + b - 1) / b",
                                         "swath_ceil_div"),
        # a plan's sort key: its run (< 64), then ``major``, then ``minor``, in one word
        # (larger values than their 26 and 32 bits hold tie: the order of those pairs
        # only weighs on speed)
        "plan_key": cp.ElementwiseKernel(
            "int64 run, int64 major, int64 minor", "uint64 key",
            "key = ((unsigned long long)run << 58)"
            " | ((unsigned long long)min(major, (long long)0x3ffffff) << 32)"
            " | (unsigned long long)min(minor, (long long)0xffffffff)", "swath_plan_key"),
        # a fill's passes, widest pass's columns and words of codes (P * S * G, walk.cuh) of
        # a pair, and whether those pass ``budget``
        "pass_shape": cp.ElementwiseKernel(
            "int64 m, int64 n, int64 group, int32 lo, int32 hi, int64 rows, int64 budget",
            "int64 passes, int64 columns, int64 words, bool large",
            """
            const long long pass_rows = group * rows;
            passes = (m + pass_rows - 1) / pass_rows;
            columns = min(n, pass_rows + (long long)hi - lo);
            words = passes * (columns + group - 1) * group;
            large = words > budget;
            """, "swath_pass_shape"),
        # ends.cu's spill words at plan position k, whose run begins at position ``first``
        # (two pairs a group from there; ``key``: the run of each position): the longer
        # target's H and F of a group when a pass does not hold the deeper query, at
        # the group's first pair (0 at its second)
        "ends_spill_words": cp.ElementwiseKernel(
            "int64 k, int64 first, raw int32 m, raw int32 n, int64 pass_rows, raw int64 key,"
            " int64 count",
            "int64 words",
            f"""
            words = 0;
            if ((k - first) % 2 == 0) {{
                int deeper = m[k], longer = n[k];
                if (k + 1 < count && key[k + 1] == key[k]) {{
                    deeper = max(deeper, m[k + 1]);
                    longer = max(longer, n[k + 1]);
                }}
                words = {SPILL_RULE.format(m="deeper", n="longer")};
            }}
            """, "swath_ends_spill_words"),
        # spill words of a pair: its target's H and F when it takes more than one pass
        "spill_words": cp.ElementwiseKernel("T m, T n, int64 pass_rows", "int64 words",
                                            f"words = {SPILL_RULE.format(m='m', n='n')}",
                                            "swath_spill_words"),
        # threads per group: the smallest of GROUP_SIZES whose ``rows`` rows a thread hold
        # the query, the largest for longer ones (the sizes double from one to the next)
        "group_size": cp.ElementwiseKernel(
            "int64 m, int64 rows", "int64 group",
            f"group = {GROUP_SIZES[0]};"
            f" while (group < {GROUP_SIZES[-1]} && group * rows < m) group *= 2;",
            "swath_group_size"),
        # the index of a group size in FILL_GROUPS (which double from one to the next)
        "size_index": cp.ElementwiseKernel(
            "int64 group", "int64 index", f"index = 63 - __clzll(group / {FILL_GROUPS[0]})",
            "swath_size_index"),
        # ends.cu's pairs: every cell fits its 16 bits (see plan.banded_pairs)
        "banded": cp.ElementwiseKernel(
            "int64 m, int64 n, int64 top, int64 open, int64 extend, int64 fixed, int64 cell",
            "bool ok",
            "ok = m > 0 && n > 0 && top * min(m, n) + open <= cell"
            " && extend * (m + n) + fixed <= cell",
            "swath_banded"),
    }
