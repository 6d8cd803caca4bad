// Banded global scores, one pair per thread: the first phase of all against all.
//
// m, n: a pair's lengths; d = i - j: the diagonal of cell (i, j); W: the widest band
// an instance holds; A: alphabet size.
//
// A thread scores one pair over the global alignments that stay on diagonals lo .. hi
// (the host clips them to -n .. m and sends only bands that hold diagonals 0 and
// m - n, at most W wide). The band is one row of W cells indexed by diagonal, updated
// in place from the last diagonal to the first, as the CPU twin does (kernels/cpu/
// band.py). Up to W = 64 the loop over the band is unrolled, so the row, the gaps and
// a window of the target's residues (shifted by one each row) live in registers;
// wider instances keep them in local memory and read the target directly. No path: a
// cell of MINUS_INFINITY (swath.constants, given at compile time).
#include "cells.cuh"

constexpr int UNROLLED = 64;      // the widest band held in registers

template <int W>
__global__ void band_scores(const u8* __restrict__ q_res, const i64* __restrict__ q_off,
                            const u8* __restrict__ t_res, const i64* __restrict__ t_off,
                            const int* __restrict__ pairs, const int npairs, const int nt,
                            const int* __restrict__ lo_all, const int* __restrict__ hi_all,
                            const int* __restrict__ matrix, const int A, const int gap_open,
                            const int gap_extend, int* __restrict__ out)
{
    extern __shared__ int sub[];
    for (int x = threadIdx.x; x < A * A; x += blockDim.x) sub[x] = matrix[x];
    __syncthreads();
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= npairs) return;
    const int pair = pairs[p];
    const int qi = pair / nt, tj = pair % nt;
    const u8* q = q_res + q_off[qi];
    const u8* t = t_res + t_off[tj];
    const int m = (int)(q_off[qi + 1] - q_off[qi]), n = (int)(t_off[tj + 1] - t_off[tj]);
    const int lo = ::max(lo_all[pair], -n), hi = ::min(hi_all[pair], m);
    const int width = hi - lo + 1;
    const int first = gap_open + gap_extend;
    constexpr bool REG = W <= UNROLLED;

    int H[W], E[W], tr[REG ? W : 1];
#pragma unroll (REG ? W : 1)
    for (int k = 0; k < (REG ? W : width); ++k) {     // row 0: j = -(lo + k)
        const int j = -(lo + k);
        H[k] = j < 0 || j > n ? MINUS_INFINITY : (j == 0 ? 0 : -(gap_open + j * gap_extend));
        E[k] = MINUS_INFINITY;
        if constexpr (REG) {
            const int at = -lo - k - 1;       // the residue of column j - 1 in row 1, less one row
            tr[k] = at >= 0 && at < n ? t[at] : 0;
        }
    }
    for (int i = 1; i <= m; ++i) {
        const int* row = sub + q[i - 1] * A;
        const int zero = i - lo;              // k of column 0
        if constexpr (REG) {
#pragma unroll
            for (int k = W - 1; k > 0; --k) tr[k] = tr[k - 1];
            tr[0] = zero - 1 < n ? t[zero - 1] : 0;
        }
        int left = MINUS_INFINITY, f = MINUS_INFINITY;
#pragma unroll (REG ? W : 1)
        for (int k = (REG ? W : width) - 1; k >= 0; --k) {
            const int j = zero - k;
            int h, e;
            if (k >= width || j < 0 || j > n) {
                h = MINUS_INFINITY;
                e = MINUS_INFINITY;
                f = MINUS_INFINITY;
            } else if (j == 0) {
                h = -(gap_open + i * gap_extend);
                e = MINUS_INFINITY;
                f = MINUS_INFINITY;
            } else {
                e = k > 0 ? Int32::addmax(E[k - 1], -gap_extend,
                                          Int32::addmax(H[k - 1], -first, MINUS_INFINITY))
                          : MINUS_INFINITY;
                f = Int32::addmax(f, -gap_extend, Int32::addmax(left, -first, MINUS_INFINITY));
                int s;
                if constexpr (REG) s = row[tr[k]];
                else s = row[t[j - 1]];
                h = Int32::max3(H[k] + s, e, f);
            }
            left = h;
            H[k] = h;
            E[k] = e;
        }
    }
    const int end = m - n - lo;
    int result = MINUS_INFINITY;
    if constexpr (REG) {
#pragma unroll
        for (int k = 0; k < W; ++k)           // a register array is read at fixed places
            if (k == end) result = H[k];
    } else {
        result = H[end];
    }
    out[pair] = result;
}
