// Database-search scoring: one query against many targets, scores only.
//
// m: query length, n: target length, G: threads of a group, R: query rows per thread,
// TILE = G * R query rows per pass, A1: alphabet size + 1 (the last code pads targets).
//
// A group of G threads aligns C::QUERIES queries against C::TARGETS targets at once:
// two targets per 32-bit register in 16-bit halves (Packed16), two queries against
// one target in the halves (QueryPacked16: the profile word holds both queries' scores,
// so no halves are paired per cell), or one of each in 32 bits (Int32). Thread t keeps rows
// t*R+1 .. t*R+R of the current query tile in registers (H and E); target residues
// stream through the group one column a step, thread t one step behind thread t-1,
// which hands it H and F of the row above its tile by warp shuffle. Queries longer
// than TILE run in passes; the H and F of each pass's last row are spilled to
// global memory (`spill`) for the next pass. The query profile of the current tile
// (score of every residue against every query row: C::Word, 16-bit, or both queries'
// 16-bit scores in a word) lives in shared memory. R must be a multiple of 8 (rows are
// read C::CHUNK at a time, 16 bytes). With two queries, m and m2 are their lengths and
// the scores of the second go to scores[out_stride ...]; the passes cover the longer one.
//
// H is kept as HG = H - (gap_open + gap_extend), the value both gap recurrences
// open from, and the profile holds s + gap_open + gap_extend, so that HG + profile is
// H + s: a cell costs 5 operations (3 with DPX fusing add and max) plus the best.
//
// Local mode tracks the best cell; a lane whose best passes CEILING - max(matrix)
// may have wrapped and is flagged for an exact re-run. Global and semiglobal lanes are
// only sent here when their score bounds fit the type (checked by the caller).
#include "cells.cuh"

#define FULL_MASK 0xffffffffu

template <int G, int R, class C, int MODE>
__global__ void __launch_bounds__(128) search_scores(
    const u8* __restrict__ residues,   // all targets, concatenated
    const i64* __restrict__ starts,    // start of target k (sorted order) in residues
    const int* __restrict__ lengths,   // length of target k (sorted order, ascending)
    int count,                         // targets in this launch
    const typename C::Word* __restrict__ profile, // (A1, stride): row i's score of residue a
    int m, int m2, int stride, int passes, int A1,
    int gap_open, int gap_extend, int ceiling,
    typename C::T* __restrict__ spill, // 2 * n_max words per group (H, F), passes > 1
    const i64* __restrict__ spill_at,  // first word of each group's spill
    int* __restrict__ scores,          // out: score of target k (query 2: out_stride + k)
    u8* __restrict__ flags,            // out: 1 where the score is not exact
    int out_stride)
{
    typedef typename C::T T;
    typedef typename C::Word W;
    constexpr int TILE = G * R;
    constexpr int CH = C::CHUNK;
    extern __shared__ __align__(16) unsigned char tile_bytes[];
    W* const tile_profile = reinterpret_cast<W*>(tile_bytes);

    const int t = threadIdx.x % G;
    const int group = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    const int first = group * C::TARGETS;
    int len[C::TARGETS];
    const u8* seq[C::TARGETS];
    int n = 0;
#pragma unroll
    for (int l = 0; l < C::TARGETS; ++l) {
        len[l] = first + l < count ? lengths[first + l] : 0;
        seq[l] = residues + (first + l < count ? starts[first + l] : 0);
        n = ::max(n, len[l]);
    }
    // lane l's output slot and whether its target is there
    auto slot = [&](int l) { return C::QUERIES == 1 ? first + l : l * out_stride + first; };
    auto present = [&](int l) { return first + (C::QUERIES == 1 ? l : 0) < count; };
    const int open = gap_open + gap_extend;
    const T goe = C::splat(-open);
    const T ge = C::splat(-gap_extend);
    const T neg_inf = C::splat(C::FLOOR + gap_extend);
    T best = C::splat(MODE == 0 ? 0 : C::FLOOR);
    T running = C::splat(C::FLOOR);   // semiglobal: max over columns of H(m, c)
    int result[C::LANES];
#pragma unroll
    for (int l = 0; l < C::LANES; ++l) result[l] = C::FLOOR;

    // every lane of a warp runs the same number of steps (shuffles need all of them)
    const int steps = __reduce_max_sync(FULL_MASK, n > 0 ? n + G - 1 : 0);
    T* my_spill = spill + (passes > 1 && first < count ? spill_at[group] : 0);

    for (int pass = 0; pass < passes; ++pass) {
        __syncthreads();
        // thread t's rows are R / CH 16-byte chunks, stored chunk-major ([a][v][t][CH])
        // so that the G threads' loads of one chunk are adjacent and free of bank conflicts
        for (int idx = threadIdx.x; idx < A1 * TILE; idx += blockDim.x) {
            const int a = idx / TILE, i = idx % TILE, k = i % R;
            tile_profile[a * TILE + ((k / CH) * G + i / R) * CH + k % CH] =
                C::biased(profile[a * stride + pass * TILE + i], open);
        }
        __syncthreads();

        const int row0 = pass * TILE + t * R;        // rows row0 + 1 .. row0 + R
        // HG of the previous column in one array, of this column in the other: the
        // step loop runs two columns an iteration, so no register is copied.
        T HGa[R], HGb[R], E[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            HGa[k] = C::splat((MODE == 0 ? 0 : -(gap_open + gap_extend * (row0 + k + 1))) - open);
            HGb[k] = HGa[k];
            E[k] = neg_inf;
        }
        T diag = C::splat((MODE == 0 || row0 == 0 ? 0 : -(gap_open + gap_extend * row0)) - open);
        T out_h = diag, out_f = neg_inf;
        const bool last_pass = pass == passes - 1;
        // the register of each query's last row, if this thread holds it in this pass
        // (scalars: the step lambda captures them, and captured arrays go to local memory)
        const int row_m = m - 1 - row0, row_m2 = (C::QUERIES == 2 ? m2 : m) - 1 - row0;
        const bool holds = MODE != 0 && row_m >= 0 && row_m < R;
        const bool holds2 = MODE != 0 && row_m2 >= 0 && row_m2 < R;
        const bool holds_m = holds || holds2;

        auto step = [&](const int s, const T (&prev)[R], T (&next)[R]) {
            T in_h = __shfl_up_sync(FULL_MASK, out_h, 1, G);
            T in_f = __shfl_up_sync(FULL_MASK, out_f, 1, G);
            const int c = s - t + 1;                  // target column, 1-based
            // Local mode runs the steps before column 1 and after column n too, as
            // columns of padding: they leave H at 0 and cannot raise the best, and a
            // step without a branch keeps both HG arrays in place (no register copies).
            const bool active = c >= 1 && c <= n;
            if (MODE != 0 && !active) return;
            if (t == 0) {
                if (pass == 0 || !active) {
                    in_h = C::splat((MODE == 1 ? -(gap_open + gap_extend * c) : 0) - open);
                    in_f = neg_inf;
                } else {
                    in_h = my_spill[2 * (c - 1)];
                    in_f = my_spill[2 * (c - 1) + 1];
                }
            }
            const uint4* rows[C::TARGETS];
#pragma unroll
            for (int l = 0; l < C::TARGETS; ++l) {
                const int a = c >= 1 && c <= len[l] ? seq[l][c - 1] : A1 - 1;
                rows[l] = reinterpret_cast<const uint4*>(tile_profile + a * TILE) + t;
            }
            T up_h = in_h, up_f = in_f, dg = diag;
#pragma unroll
            for (int v = 0; v < R / CH; ++v) {
                T sc[CH];
                C::chunk(rows, v * G, sc);
                T pair_h = best;
#pragma unroll
                for (int kk = 0; kk < CH; ++kk) {
                    const int k = v * CH + kk;
                    E[k] = C::addmax(E[k], ge, prev[k]);
                    const T f = C::addmax(up_f, ge, up_h);
                    const T h = MODE == 0 ? C::max3relu(C::add(dg, sc[kk]), E[k], f)
                                          : C::max3(C::add(dg, sc[kk]), E[k], f);
                    if (MODE == 0) {
                        if (kk & 1) best = C::max3(best, pair_h, h);
                        else pair_h = h;
                    }
                    dg = prev[k];
                    next[k] = C::add(h, goe);
                    up_h = next[k];
                    up_f = f;
                }
            }
            diag = in_h;
            out_h = up_h;
            out_f = up_f;
            if (t == G - 1 && !last_pass && active) {
                my_spill[2 * (c - 1)] = out_h;
                my_spill[2 * (c - 1) + 1] = out_f;
            }
            if (holds_m) {
                // H of each lane's last row; with two queries, a lane whose row this
                // thread lacks stays near the floor (it must not raise `running`)
                T v;
                if constexpr (C::QUERIES == 1) {
                    v = next[0];
#pragma unroll
                    for (int k = 1; k < R; ++k)
                        if (k == row_m) v = next[k];
                } else {
                    v = C::splat(C::FLOOR);
#pragma unroll
                    for (int k = 0; k < R; ++k) {
                        if (k == row_m) v = C::merge(v, next[k], 0);
                        if (k == row_m2) v = C::merge(v, next[k], 1);
                    }
                }
                v = C::add(v, C::splat(open));
                if (MODE == 2) {
                    running = C::max(running, v);
                    v = running;
                }
#pragma unroll
                for (int l = 0; l < C::LANES; ++l)
                    if ((l == 0 ? holds : holds2) && c == len[C::TARGETS == 1 ? 0 : l])
                        result[l] = C::lane(v, l);
            }
        };
        for (int s = 0; s < steps; s += 2) {
            step(s, HGa, HGb);
            if (s + 1 < steps) step(s + 1, HGb, HGa);
        }
    }

    if (MODE == 0) {
        // the group's best: max over its threads
#pragma unroll
        for (int l = 0; l < C::LANES; ++l) {
            int b = C::lane(best, l);
            for (int off = G / 2; off > 0; off /= 2)
                b = ::max(b, __shfl_xor_sync(FULL_MASK, b, off, G));
            result[l] = b;
        }
        if (t == 0) {
#pragma unroll
            for (int l = 0; l < C::LANES; ++l) {
                if (present(l)) {
                    scores[slot(l)] = result[l];
                    flags[slot(l)] = result[l] > ceiling;
                }
            }
        }
    } else {
        // the thread holding lane l's last row wrote its result; it is the only writer
#pragma unroll
        for (int l = 0; l < C::LANES; ++l) {
            const int row = (C::QUERIES == 2 && l == 1 ? m2 : m) - 1;
            if ((row % TILE) / R == t && present(l)) {
                scores[slot(l)] = result[l];
                flags[slot(l)] = 0;
            }
        }
    }
}
