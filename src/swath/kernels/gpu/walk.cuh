// The layout of the direction codes of a banded pair, and the walk that follows them back
// (traceback.cu's fill, 32-bit cells, and codes16.cu's, two pairs a register).
//
// m: query length, n: target length, G: threads of a group, R: query rows per thread,
// PASS_ROWS = G * R rows per pass. Pass p of a pair with the band of diagonals lo .. hi
// (column - row; BAND_FREE: every column) computes columns
// max(1, p * PASS_ROWS + 1 + lo) .. min(n, (p + 1) * PASS_ROWS + hi) and takes
// S = min(n, PASS_ROWS + hi - lo) + G - 1 steps. Thread t's 16 codes of one step form one
// 64-bit word; the G words of a step are adjacent. Word of cell (r, c) in pass p, whose
// first column is c0: ((p * S + c - c0 + t) * G + t), nibble (r - 1) % R, where
// t = ((r - 1) % PASS_ROWS) / R.
//
// MODE_*, STATE_*, SOURCE_*, E_EXTENDED, F_EXTENDED and BAND_FREE are swath.constants,
// given at compile time.
#pragma once

#include "cells.cuh"

typedef unsigned long long u64;

// Steps a pass of a pair: its widest pass's columns, plus the wavefront's G - 1.
template <int G, int PASS_ROWS>
__device__ __forceinline__ int pass_steps(int n, int lo, int hi) {
    return ::min(n, PASS_ROWS + hi - lo) + G - 1;
}

// The first and last column of pass p (1-based; empty when first > last).
template <int PASS_ROWS>
__device__ __forceinline__ int2 pass_columns(int p, int n, int lo, int hi) {
    return make_int2(::max(1, p * PASS_ROWS + 1 + lo), ::min(n, (p + 1) * PASS_ROWS + hi));
}

// traceback.cu's codes, those of the CPU kernels: H's source (SOURCE_BITS), and whether
// E and F extended (E_EXTENDED, F_EXTENDED).
struct SourceCodes {
    static constexpr bool VALUES = false;   // the walk needs no scores
    static __device__ __forceinline__ int source(int code) { return code & SOURCE_BITS; }
    static __device__ __forceinline__ bool e_extended(int code) { return code & E_EXTENDED; }
    static __device__ __forceinline__ bool f_extended(int code) { return code & F_EXTENDED; }
};

// codes16.cu's codes, the comparisons as they come: bit 0 max(D, E) >= F, bit 1 D >= E,
// bit 2 H - open >= E - gap_extend of the cell to the left (E opens), bit 3 the same of
// F from the cell above. They hold no start: a local path starts where H = 0, so the
// walk follows the scores of the path's cells (VALUES).
struct CompareCodes {
    static constexpr bool VALUES = true;
    static __device__ __forceinline__ int source(int code) {
        return (code & 1) ? ((code & 2) ? SOURCE_DIAGONAL : SOURCE_E) : SOURCE_F;
    }
    static __device__ __forceinline__ bool e_extended(int code) { return !(code & 4); }
    static __device__ __forceinline__ bool f_extended(int code) { return !(code & 8); }
};

// Follow the codes of one pair back from its end cell (i, j), whose H is ``score``, and
// write its extended CIGAR as text, backwards, ending at ``text_end`` (at most 2 (m + n)
// characters: a run takes at most one digit a column and its letter); ``start``: the
// start cell. The scores (matrix (A, A) and gaps) serve codes with VALUES only. Returns
// the text's length, or -1 for a path that leaves the computed columns (a bug).
template <int G, int R, typename Codes>
__device__ int walk_pair(const u8* q, const u8* tg, int n, int lo, int hi, int S,
                         const u64* my_dirs, int mode, char* text_end, int i, int j,
                         int* start, int score, const short* matrix, int A, int gap_open,
                         int gap_extend)
{
    constexpr int PASS_ROWS = G * R;
    char* at = text_end;
    char run_op = 0;
    int run = 0;
    // add `count` columns of `op` to the current run, or write the run out and start one
    auto emit = [&](char op, int count) {
        if (op != run_op) {
            if (run > 0) {
                *--at = run_op;
                for (int v = run; v > 0; v /= 10) *--at = (char)('0' + v % 10);
            }
            run_op = op;
            run = 0;
        }
        run += count;
    };
    // the state at (i, j), and its score (VALUES)
    int state = STATE_H, value = score;
    while (i > 0 && j > 0) {
        const int r = i - 1;
        const int tt = (r % PASS_ROWS) / R;
        const int2 cols = pass_columns<PASS_ROWS>(r / PASS_ROWS, n, lo, hi);
        if (j < cols.x || j > cols.y) return -1;
        const u64 word = my_dirs[((i64)(r / PASS_ROWS) * S + j - cols.x + tt) * G + tt];
        const int code = (int)(word >> (4 * (r % R))) & 15;
        if (state == STATE_H) {
            const int src = Codes::source(code);
            if (src == SOURCE_START || (Codes::VALUES && mode == MODE_LOCAL && value == 0)) break;
            if (src == SOURCE_DIAGONAL) {
                emit(q[i - 1] == tg[j - 1] ? '=' : 'X', 1);
                if (Codes::VALUES) value -= matrix[q[i - 1] * A + tg[j - 1]];
                --i;
                --j;
            } else {
                state = src - SOURCE_E + STATE_E;    // the source's state, E or F
            }
        } else if (state == STATE_E) {
            emit('D', 1);
            --j;
            state = Codes::e_extended(code) ? STATE_E : STATE_H;
            if (Codes::VALUES) value += state != STATE_H ? gap_extend : gap_open + gap_extend;
        } else {
            emit('I', 1);
            --i;
            state = Codes::f_extended(code) ? STATE_F : STATE_H;
            if (Codes::VALUES) value += state != STATE_H ? gap_extend : gap_open + gap_extend;
        }
    }
    if (mode != MODE_LOCAL && i > 0) {
        emit('I', i);
        i = 0;
    }
    if (mode == MODE_GLOBAL && j > 0) {
        emit('D', j);
        j = 0;
    }
    emit(0, 0);
    start[0] = i;
    start[1] = j;
    return (int)(text_end - at);
}
