// Database-search scoring: queries against many targets, scores only.
//
// n: target length, G: threads of a group, R: query rows per thread, PASS_ROWS = G * R
// query rows a pass, A1: alphabet size + 1 (the last code pads targets and query rows).
//
// A group of G threads aligns C::QUERIES query streams against C::TARGETS targets at
// once: two targets per 32-bit register in 16-bit halves (Packed16), two query streams
// against one target in the halves (QueryPacked16: the profile word holds both streams'
// scores, so no halves are paired per cell), or one of each in 32 bits (Int32). Thread t
// keeps rows t*R+1 .. t*R+R of the current pass's rows of the streams in registers (H and
// E); target residues stream through the group one column a step, thread t one step behind
// thread t-1, which hands it H and F of the row above its rows by warp shuffle. Streams
// longer than PASS_ROWS run in passes; the H and F of each pass's last row are spilled to
// global memory (`spill`) for the next pass. The profile of the current pass (score of
// every residue against every row: C::Word, 16-bit, or both streams' 16-bit scores in a
// word) lives in shared memory. R must divide ROW_GRAIN, and ROW_GRAIN divide PASS_ROWS
// (rows are read C::CHUNK at a time, 16 bytes).
//
// A stream is its queries one after another, each starting at a multiple of ROW_GRAIN
// rows; `row_query` names the output row of each ROW_GRAIN rows of a stream (-1: padding
// past its queries), so a thread's rows belong to one query of each stream. In local
// mode a stream holds any number of queries: a thread whose rows start a query takes
// the boundary (H = 0, F = -inf) for the row above them instead of its neighbour's, and
// at the end of each pass the threads of a query reduce their best (a max over the
// group's threads that hold the query, carried into the next pass while the query goes
// on). Global and semiglobal streams hold one query each, of lengths m and m2, whose last
// rows give the scores.
//
// H is kept as HG = H - (gap_open + gap_extend), the value both gap recurrences
// open from, and the profile holds s + gap_open + gap_extend, so that HG + profile is
// H + s: a cell costs 5 operations (3 with DPX fusing add and max) plus the best.
//
// Local mode tracks the best cell; a lane whose best passes CEILING - max(matrix)
// may have wrapped and is flagged for an exact re-run. Global and semiglobal lanes are
// only sent here when their score bounds fit the type (checked by the caller).
//
// MODE_*, BLOCK and ROW_GRAIN are swath.constants, given at compile time.
#include "cells.cuh"

template <int G, int R, class C, int MODE>
__global__ void __launch_bounds__(BLOCK) search_scores(
    const u8* __restrict__ residues,   // all targets, concatenated
    const i64* __restrict__ starts,    // start of target k (sorted order) in residues
    const int* __restrict__ lengths,   // length of target k (sorted order, ascending)
    int count,                         // targets in this launch
    const typename C::Word* __restrict__ profile, // (A1, stride): row i's score of residue a
    int m, int m2, int stride, int passes, int A1,
    int gap_open, int gap_extend, int ceiling,
    typename C::T* __restrict__ spill, // 2 * n_max words per group (H, F), passes > 1
    const i64* __restrict__ spill_at,  // first word of each group's spill
    const int* __restrict__ row_query, // (QUERIES, stride / ROW_GRAIN): output row or -1
    int* __restrict__ scores,          // out: score of target k for output row q at
                                       // q * out_stride + k
    u8* __restrict__ flags,            // out: 1 where the score is not exact
    int out_stride)
{
    typedef typename C::T T;
    typedef typename C::Word W;
    constexpr int PASS_ROWS = G * R;
    constexpr int CH = C::CHUNK;
    static_assert(ROW_GRAIN % R == 0 && PASS_ROWS % ROW_GRAIN == 0 && R % CH == 0,
                  "a thread's rows hold one query of a stream, in whole profile chunks");
    extern __shared__ __align__(16) unsigned char pass_bytes[];
    W* const pass_profile = reinterpret_cast<W*>(pass_bytes);

    const int t = threadIdx.x % G;
    // the last blocks first: targets are sorted by length, so the longest start first
    // and the launch does not end on a few long groups alone
    const int group = ((gridDim.x - 1 - blockIdx.x) * blockDim.x + threadIdx.x) / G;
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
    // lane l's query stream, the output row of a stream's row, lane l's output slot for
    // row q and whether its target is there
    auto stream = [](int l) { return C::QUERIES == 2 ? l : 0; };
    const int blocks = stride / ROW_GRAIN;
    auto query_at = [&](int s, int row) { return row_query[s * blocks + row / ROW_GRAIN]; };
    auto slot = [&](int q, int l) {
        return (i64)q * out_stride + first + (C::TARGETS == 2 ? l : 0);
    };
    auto present = [&](int l) { return first + (C::TARGETS == 2 ? l : 0) < count; };
    const int open = gap_open + gap_extend;
    const T goe = C::splat(-open);
    const T ge = C::splat(-gap_extend);
    const T neg_inf = C::splat(C::FLOOR + gap_extend);
    T best = C::splat(0);
    T carry = best;                   // local: the best of the query going on past a pass
    int carry_query[C::QUERIES];      // and its output row, for each stream
#pragma unroll
    for (int s = 0; s < C::QUERIES; ++s) carry_query[s] = -2;
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
        for (int idx = threadIdx.x; idx < A1 * PASS_ROWS; idx += blockDim.x) {
            const int a = idx / PASS_ROWS, i = idx % PASS_ROWS, k = i % R;
            pass_profile[a * PASS_ROWS + ((k / CH) * G + i / R) * CH + k % CH] =
                C::biased(profile[a * stride + pass * PASS_ROWS + i], open);
        }
        __syncthreads();

        const int row0 = pass * PASS_ROWS + t * R;        // rows row0 + 1 .. row0 + R
        // local: the lanes whose query starts at this thread's first row (they take the
        // boundary for the row above), and each lane's best so far (that of the query
        // going on from the last pass, 0 for a query new in this pass)
        T fresh = 0, carried = 0;
        if (MODE == MODE_LOCAL) {
#pragma unroll
            for (int s = 0; s < C::QUERIES; ++s) {
                const int q = query_at(s, row0);
                if (row0 % ROW_GRAIN == 0 && (row0 == 0 || query_at(s, row0 - 1) != q))
                    fresh |= C::stream_mask(s);
                if (q == carry_query[s]) carried |= C::stream_mask(s);
            }
            best = C::select(C::splat(0), carry, carried);
        }
        // HG of the previous column in one array, of this column in the other: the
        // step loop runs two columns an iteration, so no register is copied.
        T HGa[R], HGb[R], E[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            HGa[k] = C::splat(
                (MODE == MODE_LOCAL ? 0 : -(gap_open + gap_extend * (row0 + k + 1))) - open);
            HGb[k] = HGa[k];
            E[k] = neg_inf;
        }
        T diag = C::splat(
            (MODE == MODE_LOCAL || row0 == 0 ? 0 : -(gap_open + gap_extend * row0)) - open);
        T out_h = diag, out_f = neg_inf;
        const bool last_pass = pass == passes - 1;
        // the register of each query's last row, if this thread holds it in this pass
        // (scalars: the step lambda captures them, and captured arrays go to local memory)
        const int row_m = m - 1 - row0, row_m2 = (C::QUERIES == 2 ? m2 : m) - 1 - row0;
        const bool holds = MODE != MODE_LOCAL && row_m >= 0 && row_m < R;
        const bool holds2 = MODE != MODE_LOCAL && row_m2 >= 0 && row_m2 < R;
        const bool holds_m = holds || holds2;

        // `reset` (a Flag): whether some thread of the warp starts a query in this pass;
        // the steps of the other passes (most of them) go without the boundary select.
        // `bounded` (a Flag): whether a thread's column may lie outside its targets; the
        // steps where every column of the warp is inside all of them go without the checks
        auto step = [&](auto reset, auto bounded, const int s, const T (&prev)[R],
                        T (&next)[R]) {
            constexpr bool checks = decltype(bounded)::value;
            T in_h = __shfl_up_sync(FULL_MASK, out_h, 1, G);
            T in_f = __shfl_up_sync(FULL_MASK, out_f, 1, G);
            const int c = s - t + 1;                  // target column, 1-based
            // Local mode runs the steps before column 1 and after column n too, as
            // columns of padding: they leave H at 0 and cannot raise the best, and a
            // step without a branch keeps both HG arrays in place (no register copies).
            const bool active = !checks || (c >= 1 && c <= n);
            if (MODE != MODE_LOCAL && !active) return;
            if (t == 0) {
                if (pass == 0 || !active) {
                    in_h = C::splat(
                        (MODE == MODE_GLOBAL ? -(gap_open + gap_extend * c) : 0) - open);
                    in_f = neg_inf;
                } else {
                    in_h = my_spill[2 * (c - 1)];
                    in_f = my_spill[2 * (c - 1) + 1];
                }
            }
            if constexpr (decltype(reset)::value) {
                in_h = C::select(in_h, goe, fresh);
                in_f = C::select(in_f, neg_inf, fresh);
            }
            const uint4* rows[C::TARGETS];
#pragma unroll
            for (int l = 0; l < C::TARGETS; ++l) {
                const int a = !checks || (c >= 1 && c <= len[l]) ? seq[l][c - 1] : A1 - 1;
                rows[l] = reinterpret_cast<const uint4*>(pass_profile + a * PASS_ROWS) + t;
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
                    const T h = MODE == MODE_LOCAL ? C::max3relu(C::add(dg, sc[kk]), E[k], f)
                                          : C::max3(C::add(dg, sc[kk]), E[k], f);
                    if (MODE == MODE_LOCAL) {
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
                if (MODE == MODE_SEMIGLOBAL) {
                    running = C::max(running, v);
                    v = running;
                }
#pragma unroll
                for (int l = 0; l < C::LANES; ++l)
                    if ((l == 0 ? holds : holds2) && c == len[C::TARGETS == 1 ? 0 : l])
                        result[l] = C::lane(v, l);
            }
        };
        // steps 0 .. G - 1 fill the wavefront and the steps from the warp's shortest
        // target on drain it (each thread's column checked, the boundary select in every
        // local step); the steps between, most of them, check nothing
        int shortest = len[0];
#pragma unroll
        for (int l = 1; l < C::TARGETS; ++l) shortest = ::min(shortest, len[l]);
        const int inside = __reduce_min_sync(FULL_MASK, shortest);   // steps < it: inside
        auto two = [&](auto reset, auto bounded, const int s) {
            step(reset, bounded, s, HGa, HGb);
            if (s + 1 < steps) step(reset, bounded, s + 1, HGb, HGa);
        };
        auto run = [&](auto reset) {
            int s = 0;
            for (; s < G && s < steps; s += 2) two(Flag<MODE == MODE_LOCAL>(), Flag<true>(), s);
            for (; s + 2 <= inside; s += 2) two(reset, Flag<false>(), s);
            for (; s < steps; s += 2) two(Flag<MODE == MODE_LOCAL>(), Flag<true>(), s);
        };
        if (MODE == MODE_LOCAL && __any_sync(FULL_MASK, fresh != 0))
            run(Flag<MODE == MODE_LOCAL>());
        else run(Flag<false>());

        if (MODE == MODE_LOCAL) {
            // each lane's best over its query's rows up to this thread's (a max scan over the
            // group's threads of each query); the query's last thread in this pass writes it,
            // unless the query goes on in the next pass, which carries it
            int query[C::QUERIES], after[C::QUERIES];
#pragma unroll
            for (int s = 0; s < C::QUERIES; ++s) query[s] = query_at(s, row0);
#pragma unroll
            for (int off = 1; off < G; off *= 2) {
                const T other = __shfl_up_sync(FULL_MASK, best, off, G);
                T same = 0;
#pragma unroll
                for (int s = 0; s < C::QUERIES; ++s)
                    if (__shfl_up_sync(FULL_MASK, query[s], off, G) == query[s] && t >= off)
                        same |= C::stream_mask(s);
                best = C::select(best, C::max(best, other), same);
            }
#pragma unroll
            for (int s = 0; s < C::QUERIES; ++s) {
                after[s] = __shfl_down_sync(FULL_MASK, query[s], 1, G);
                if (t == G - 1) after[s] = last_pass ? -2 : query_at(s, row0 + R);
                carry_query[s] = __shfl_sync(FULL_MASK, query[s], G - 1, G);
            }
            carry = __shfl_sync(FULL_MASK, best, G - 1, G);
#pragma unroll
            for (int l = 0; l < C::LANES; ++l) {
                const int q = query[stream(l)];
                if (after[stream(l)] != q && q >= 0 && present(l)) {
                    const int b = C::lane(best, l);
                    scores[slot(q, l)] = b;
                    flags[slot(q, l)] = b > ceiling;
                }
            }
        }
    }

    if (MODE != MODE_LOCAL) {
        // the thread holding lane l's last row wrote its result; it is the only writer
#pragma unroll
        for (int l = 0; l < C::LANES; ++l) {
            const int row = (C::QUERIES == 2 && l == 1 ? m2 : m) - 1;
            if ((row % PASS_ROWS) / R == t && present(l)) {
                const int q = query_at(stream(l), 0);
                scores[slot(q, l)] = result[l];
                flags[slot(q, l)] = 0;
            }
        }
    }
}
