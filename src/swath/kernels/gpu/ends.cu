// The first phase of batched traceback: each pair's score and a window of its matrix
// that holds its traced path, in 16-bit cells, two pairs a register.
//
// m, n: a pair's query and target lengths, G: threads of a group, R = TRACEBACK_ROWS
// query rows a thread, PASS_ROWS = G * R rows a pass. A group aligns two pairs at once,
// one in each 16-bit half of its registers (low half: the first), with the recurrence of
// search.cu: H kept as HG = H - (gap_open + gap_extend), the profile biased by
// gap_open + gap_extend (but F of the row below opens from D = max(diagonal, E), not from
// H: H - open = max(D, F) - open, and F - open is at most F - gap_extend, so the chain
// from row to row is one operation), rows in registers, target columns streaming through the
// group one a step, warp shuffles between threads, the last row's H and F spilled
// between passes. A thread's profile (the scores of its rows against every residue,
// for both pairs) lives in its own slice of shared memory; padding rows and columns
// score ENDS_PAD_SCORE. Only pairs whose every cell fits 16 bits are sent here (the
// caller checks the bounds), and gap_extend >= 1: then a padding cell is below a real
// cell of its row or of a row above, so it never reaches a pair's score. A semiglobal
// pair's padding rows go above its first row instead, scoring 0 against every residue:
// each is then a copy of row 0 (H = 0, and E and F = -(gap_open + gap_extend), which is
// what row 1 opens from anyway), and row m is the last row of the group's last pass,
// whose H thread G - 1 hands on at every step.
//
// MODE_*, BLOCK, TRACEBACK_ROWS and ENDS_PAD_SCORE are swath.constants, given at compile
// time.
//
// What it finds, a pair (MODE_LOCAL or MODE_SEMIGLOBAL):
//   S, the score;
//   semiglobal: the end column j, the first of row m with H = S (the end cell is (m, j));
//   local: the first block of R rows, in row order, whose best is S, and the first and
//     last columns where a cell of that block has H = S. The end cell (the first with
//     H = S in row-major order) lies in that block, between those columns.
// A path of score S that ends at (i, j), with `ins` insertion and `del` deletion steps,
// takes at most min(i - ins, j - del) diagonal steps, each scoring at most
// top = max(matrix, 0), and its gaps cost at least gap_open (if any) plus gap_extend
// a step. So (top + gap_extend) ins <= top i - S - gap_open, (top + gap_extend) del
// <= top j - S - gap_open, and gap_extend (ins + del) <= top min(i, j) - S - gap_open;
// its cells lie on the diagonals (column - row) j - i - del .. j - i + ins. The window
// is rows 1 .. rows and columns c_lo + 1 .. c_lo + cols, with the band of diagonals
// lo .. hi counted in the window's columns.
//
// out, a pair: S, rows, c_lo, cols, lo, hi (a local pair of score 0: all zero).
#include "cells.cuh"

template <int G, int MODE>
__global__ void __launch_bounds__(BLOCK) traceback_ends(
    const u8* __restrict__ q_res, const i64* __restrict__ q_start, const int* __restrict__ q_len,
    const u8* __restrict__ t_res, const i64* __restrict__ t_start, const int* __restrict__ t_len,
    int count,                         // pairs (processing order); group g: 2g and 2g + 1
    const short* __restrict__ matrix,  // (A, A)
    int A, int gap_open, int gap_extend, int top,
    u32* __restrict__ spill,           // 2 * n words a group (its longer target), P > 1
    const i64* __restrict__ spill_at,  // by pair: its group's first word, at its first pair
    int* __restrict__ out)             // (pairs, 6)
{
    typedef Packed16 C;
    typedef u32 T;
    constexpr int R = TRACEBACK_ROWS, PASS_ROWS = G * R;
    const int open = gap_open + gap_extend;
    extern __shared__ __align__(16) unsigned char smem[];
    // each thread's profile, 16-byte chunks of 8 rows: chunk v of row x (x = l * A + a:
    // pair l's scores against residue a; x = 2 * A: padding) of thread i at
    // (x * 2 + v) * BLOCK + i, so that the threads of a warp load from distinct banks
    uint4* const prof = reinterpret_cast<uint4*>(smem) + threadIdx.x;
    short* const prof16 = reinterpret_cast<short*>(prof);
    auto entry = [&](int x, int k) -> short& { return prof16[((x * 2 + k / 8) * BLOCK) * 8 + k % 8]; };
    for (int k = 0; k < R; ++k) entry(2 * A, k) = (short)(ENDS_PAD_SCORE + open);
    const int t = threadIdx.x % G;
    const int group = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    int m[2], n[2];
    const u8* q[2];
    const u8* tg[2];
#pragma unroll
    for (int l = 0; l < 2; ++l) {
        const int p = 2 * group + l;
        const bool present = p < count;
        m[l] = present ? q_len[p] : 0;
        n[l] = present ? t_len[p] : 0;
        q[l] = q_res + (present ? q_start[p] : 0);
        tg[l] = t_res + (present ? t_start[p] : 0);
    }
    // scalars for the step (arrays a lambda captures go to local memory)
    const int n0 = n[0], n1 = n[1], n_max = ::max(n0, n1);
    const u8* const tg0 = tg[0];
    const u8* const tg1 = tg[1];
    const int passes = (::max(m[0], m[1]) + PASS_ROWS - 1) / PASS_ROWS;
    // semiglobal: padding rows above a pair's rows (row i of pair l is row i + pad_l)
    const int pad0 = MODE == MODE_SEMIGLOBAL ? passes * PASS_ROWS - m[0] : 0;
    const int pad1 = MODE == MODE_SEMIGLOBAL ? passes * PASS_ROWS - m[1] : 0;
    // H of row 0's boundary cell of (padded) row r: 0 above a pair's rows
    auto edge = [&](int r, int pad) {
        return MODE == MODE_LOCAL || r <= pad ? 0 : -(gap_open + gap_extend * (r - pad));
    };
    auto lanes = [](int low, int high) -> T { return ((u32)low & 0xffffu) | ((u32)high << 16); };
    // every lane of a warp runs the same passes and steps (shuffles need all of them)
    const int all_passes = __reduce_max_sync(FULL_MASK, passes);
    const int steps = __reduce_max_sync(FULL_MASK, n_max > 0 ? n_max + G - 1 : 0);
    const int inside = __reduce_min_sync(FULL_MASK, ::min(n0, n1));   // steps < it: inside
    T* my_spill = spill + (passes > 1 ? spill_at[2 * group] : 0);
    const T goe = C::splat(-open), ge = C::splat(-gap_extend);
    const T neg_inf = C::splat(C::FLOOR + gap_extend);

    // local, each pair: the best so far, its block's first row, first and last column
    int best[2] = {0, 0}, first_row[2] = {0, 0}, first_col[2] = {0, 0}, last_col[2] = {0, 0};
    // semiglobal, both pairs: the best H of row m so far and its first column
    T running = C::splat(C::FLOOR), running_col = 0;

    for (int pass = 0; pass < all_passes; ++pass) {
        const bool live = pass < passes;
        const int row0 = pass * PASS_ROWS + t * R;       // rows row0 + 1 .. row0 + R
#pragma unroll
        for (int l = 0; l < 2; ++l) {
            const int pad = l ? pad1 : pad0;
            for (int k = 0; k < R; ++k) {
                const int i = row0 + k + 1 - pad;     // the pair's row
                const int a = live && i >= 1 && i <= m[l] ? q[l][i - 1] : -1;
                const bool above = live && i < 1;    // a row of 0 scores, above the pair's
                for (int b = 0; b < A; ++b)
                    entry(l * A + b, k) = (short)(
                        (a >= 0 ? matrix[a * A + b] : above ? 0 : ENDS_PAD_SCORE) + open);
            }
        }
        T HGa[R], HGb[R], E[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int r = row0 + k + 1;
            HGa[k] = lanes(edge(r, pad0) - open, edge(r, pad1) - open);
            HGb[k] = HGa[k];
            E[k] = neg_inf;
        }
        T diag = lanes(edge(row0, pad0) - open, edge(row0, pad1) - open);
        T out_h = diag, out_f = neg_inf;
        // local: the best HG of this thread's rows in this pass (H - open), its first and
        // last column
        T pass_best = goe, pass_first = 0, pass_last = 0;
        // semiglobal: whether this thread's last row is row m of both pairs
        const bool holds_m =
            MODE == MODE_SEMIGLOBAL && live && pass == passes - 1 && t == G - 1;

        // `bounded` (a Flag): whether a thread's column may lie outside its targets; the
        // steps where every column of the warp is inside all of them go without the
        // checks (a group past its passes then computes padding nobody reads); res0, res1:
        // the two targets' residues at the step's column (when inside them)
        auto step = [&](auto bounded, const int s, const T (&prev)[R], T (&next)[R],
                        const int res0, const int res1) {
            constexpr bool checks = decltype(bounded)::value;
            T in_h = __shfl_up_sync(FULL_MASK, out_h, 1, G);
            T in_f = __shfl_up_sync(FULL_MASK, out_f, 1, G);
            const int c = s - t + 1;                  // target column, 1-based
            if (checks && (!live || c < 1 || c > n_max)) return;
            if (t == 0) {
                if (pass == 0 || !live) {
                    in_h = C::splat(-open);           // row 0: H = 0
                    in_f = neg_inf;
                } else {
                    in_h = my_spill[2 * (c - 1)];
                    in_f = my_spill[2 * (c - 1) + 1];
                }
            }
            const uint4* rows0 = prof + 2 * BLOCK * (!checks || c <= n0 ? res0 : 2 * A);
            const uint4* rows1 = prof + 2 * BLOCK * (!checks || c <= n1 ? A + res1 : 2 * A);
            // up_d: D - open of the row above (its HG for row 0), up_f: its F
            T up_d = in_h, up_f = in_f, dg = diag, step_best = goe;
#pragma unroll
            for (int v = 0; v < 2; ++v) {
                const uint4 wa = rows0[v * BLOCK], wb = rows1[v * BLOCK];
                const u32 a4[4] = {wa.x, wa.y, wa.z, wa.w};
                const u32 b4[4] = {wb.x, wb.y, wb.z, wb.w};
                T pair_h = goe;
#pragma unroll
                for (int kk = 0; kk < 8; ++kk) {
                    const int k = v * 8 + kk;
                    const T sc = __byte_perm(a4[kk / 2], b4[kk / 2], (kk & 1) ? 0x7632 : 0x5410);
                    // F from the row above: max(F - gap_extend, H - open) =
                    // max(F - gap_extend, D - open), as F - open <= F - gap_extend
                    const T f = C::addmax(up_f, ge, up_d);
                    E[k] = C::addmax(E[k], ge, prev[k]);
                    // D - open, D = max(diagonal, E), and local: at least 0
                    const T de = C::addmax(dg, sc, E[k]);
                    const T de_open =
                        MODE == MODE_LOCAL ? C::addmax(de, goe, goe) : C::add(de, goe);
                    next[k] = C::addmax(f, goe, de_open);      // HG = max(D, F) - open
                    if (MODE == MODE_LOCAL) {
                        if (kk & 1) step_best = C::max3(step_best, pair_h, next[k]);
                        else pair_h = next[k];
                    }
                    dg = prev[k];
                    up_d = de_open;
                    up_f = f;
                }
            }
            diag = in_h;
            out_h = next[R - 1];
            out_f = up_f;
            if (t == G - 1 && pass < passes - 1)
                reinterpret_cast<uint2*>(my_spill)[c - 1] = make_uint2(out_h, out_f);
            const T col = C::splat(c);
            if (MODE == MODE_LOCAL) {
                const T above = __vcmpgts2(step_best, pass_best);
                const T level = __vcmpges2(step_best, pass_best);
                pass_best = C::max(pass_best, step_best);
                pass_first = C::select(pass_first, col, above);
                pass_last = C::select(pass_last, col, level);
            } else if (holds_m) {
                const T v = C::add(out_h, C::splat(open));   // H of row m
                const T inside = !checks ? 0xffffffffu
                                         : (c <= n0 ? 0xffffu : 0u) | (c <= n1 ? 0xffff0000u : 0u);
                const T above = __vcmpgts2(v, running) & inside;
                running = C::select(running, v, above);
                running_col = C::select(running_col, col, above);
            }
        };
        // the residues of a thread's next two columns (x0: the first target's, x1: the
        // second's), loaded an iteration of two steps before their use: the targets'
        // bytes often come from L2 (L1 is what the profiles leave of the shared memory)
        auto fetch = [](const u8* p, int n, int c) -> int { return c >= 1 && c <= n ? p[c - 1] : 0; };
        int x0a = fetch(tg0, n0, 1 - t), x0b = fetch(tg0, n0, 2 - t);
        int x1a = fetch(tg1, n1, 1 - t), x1b = fetch(tg1, n1, 2 - t);
        auto two = [&](auto bounded, const int s) {
            const int r0a = x0a, r0b = x0b, r1a = x1a, r1b = x1b;
            const int ahead = s + 3 - t;              // the column of step s + 2
            x0a = fetch(tg0, n0, ahead);
            x0b = fetch(tg0, n0, ahead + 1);
            x1a = fetch(tg1, n1, ahead);
            x1b = fetch(tg1, n1, ahead + 1);
            step(bounded, s, HGa, HGb, r0a, r1a);
            if (s + 1 < steps) step(bounded, s + 1, HGb, HGa, r0b, r1b);
        };
        // steps 0 .. G - 1 fill the wavefront and the steps from the warp's shortest
        // target on drain it; the steps between check nothing
        int s = 0;
        for (; s < G && s < steps; s += 2) two(Flag<true>(), s);
        for (; s + 2 <= inside; s += 2) two(Flag<false>(), s);
        for (; s < steps; s += 2) two(Flag<true>(), s);
        if (MODE == MODE_LOCAL && live) {
            // passes ascend in rows: strict > keeps the first block
#pragma unroll
            for (int l = 0; l < 2; ++l) {
                const int b = C::lane(pass_best, l) + open;
                if (row0 < m[l] && b > best[l]) {
                    best[l] = b;
                    first_row[l] = row0 + 1;
                    first_col[l] = C::lane(pass_first, l);
                    last_col[l] = C::lane(pass_last, l);
                }
            }
        }
        __syncwarp();
    }

    // each pair's result, from the thread that holds it
    auto write = [&](int p, int score, int row_lo, int row_hi, int col_lo, int col_hi) {
        int* o = out + 6 * (i64)p;
        if (MODE == MODE_LOCAL && score <= 0) {
            for (int x = 0; x < 6; ++x) o[x] = 0;
            return;
        }
        // the most insertion and deletion steps a path of this score ending in the
        // rows and columns found can take
        const int both = (top * ::min(row_hi, col_hi) - score - gap_open) / gap_extend;
        const int ins = ::max(0, ::min(both, (top * row_hi - score - gap_open) / (top + gap_extend)));
        const int del = ::max(0, ::min(both, (top * col_hi - score - gap_open) / (top + gap_extend)));
        const int lo = col_lo - row_hi - del, hi = col_hi - row_lo + ins;
        const int c_lo = ::max(0, lo);
        o[0] = score;
        o[1] = row_hi;
        o[2] = c_lo;
        o[3] = col_hi - c_lo;
        o[4] = lo - c_lo;
        o[5] = hi - c_lo;
    };
#pragma unroll
    for (int l = 0; l < 2; ++l) {
        const int p = 2 * group + l;
        if (MODE == MODE_LOCAL) {
            // the group's best; ties go to the first block in row order
            for (int off = G / 2; off > 0; off /= 2) {
                const int ob = __shfl_xor_sync(FULL_MASK, best[l], off, G);
                const int orow = __shfl_xor_sync(FULL_MASK, first_row[l], off, G);
                const int ofirst = __shfl_xor_sync(FULL_MASK, first_col[l], off, G);
                const int olast = __shfl_xor_sync(FULL_MASK, last_col[l], off, G);
                if (ob > best[l] || (ob == best[l] && orow < first_row[l])) {
                    best[l] = ob;
                    first_row[l] = orow;
                    first_col[l] = ofirst;
                    last_col[l] = olast;
                }
            }
            if (p < count && t == 0)
                write(p, best[l], first_row[l], ::min(first_row[l] + R - 1, m[l]), first_col[l],
                      last_col[l]);
        } else if (p < count && t == G - 1) {
            const int col = C::lane(running_col, l);
            write(p, C::lane(running, l), m[l], m[l], col, col);
        }
    }
}
