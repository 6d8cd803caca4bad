// One tile of a long pair's matrix on the GPU: the twin of kernels/cpu/tiles.py.
//
// The tile's rows are cut into tiers of 32 * R rows, one warp each. A warp computes
// its tier left to right: lane l holds rows l * R .. l * R + R - 1 of the tier in
// registers and works one column behind lane l - 1, whose last row's H and F it takes
// by a shuffle (the tier is a wavefront of lanes). Lane 0 takes its top input from the
// tier above: that tier's last row, which its warp writes to a ring of WINDOW columns
// in global memory and publishes CHUNK columns at a time behind a progress counter; a
// tier waits on its reader's counter before it overwrites the ring. One launch runs
// as many tiers as the GPU holds at once (they wait on each other, so all must be
// resident) and writes its last tier's last row in full: the next launch's input,
// and after the last launch the tile's bottom row (StripedScore, with tiers of rows
// in the part of strips, and one persistent launch per slab of tiers).
//
// Values are int32, kept as H - gap_open - gap_extend ("hm") so that one DPX
// instruction (max(a + b, c)) serves each of E, F and H; the substitution scores come
// shifted by the same amount. Recurrences and tie rules are the CPU twin's: a gap opens
// unless extending scores strictly more; H takes the diagonal unless E, then F, scores
// strictly more; in local mode a cell at or below 0 starts an alignment.
//
// With ORIGINS every cell and state also carries its origin, tile-local: ((row *
// (w + 1)) + column) * 4 + state, state STATE_H, STATE_E, STATE_F or STATE_START.
//
// WARP, BLOCK, MINUS_INFINITY, STATE_*, WINDOW, BATCH_FIELDS and BATCH_FIRST_TIER are
// swath.constants, given at compile time.
#include "cells.cuh"

constexpr int CHUNK = 32;     // columns a tier publishes at a time (one per lane)
// a tier waits on the tier above every SYNC columns, for the SYNC columns ahead (waits
// every 32 columns measured slower); it checks the tier below (the ring's reader) every
// BACK columns, for 2 BACK ahead.
constexpr int SYNC = 4 * CHUNK;
constexpr int BACK = 256;
// the substitution score of the rows a tail tier holds past the tile's last row: so
// low that they never hold a best cell (shared memory holds it as residue `alpha`)
constexpr int PAD_SCORE = -(1 << 20);

struct TileArgs {
    const u8* q;                 // h query residues (the tile's rows)
    const u8* t;                 // w target residues (its columns)
    const int* sub;              // alpha x alpha, scores + gap_open + gap_extend
    const int* left_h;           // h: H on the column left of the tile
    const int* left_e;           // h: E there
    const int* in_row;           // NV x w: the row above the launch's first tier (H, F[, oH, oF])
    int* out_row;                // NV x w: the launch's last tier's last row
    int* ring;                   // tiers x NV x WINDOW: the other tiers' last rows
    int* progress;               // tiers: columns of its last row published
    int* right;                  // NV x h: the tile's last column (H, E[, oH, oE])
    int* best;                   // tile tiers x 4: first best cell (score, row, column, origin)
    int corner;                  // H at the tile's top left corner (row 0, column 0)
    int h, w, alpha, goe, ge, tier0, tiers;
    // streaming between launches, on one GPU or several (null: not streamed): the
    // columns of in_row published so far by the launch that computes it, and where this
    // launch's last tier publishes the columns of out_row it has written (streamed rows
    // and their counters are in pinned host memory)
    const int* in_ready;
    int* out_ready;
};

// The substitution score (shifted) of query residue row r against target residue c.
template <bool PACKED>
struct Scores;

// Alphabets of at most 8 letters with shifted scores in int8: each row's 8 scores in
// two registers, one byte-permute (with sign extension) per cell.
template <>
struct Scores<true> {
    u32 lo, hi;
    __device__ __forceinline__ void load(const int* sm, int alpha, int qr) {
        lo = hi = 0;
        for (int c = 0; c < alpha; ++c) {
            u32 b = (u32)(max(-128, min(127, sm[qr * alpha + c])) & 0xff);
            if (c < 4) lo |= b << (8 * c); else hi |= b << (8 * (c - 4));
        }
    }
    // byte c, sign-extended: c in the low nibble, c | 8 in the three above
    static __device__ __forceinline__ u32 selector(int c) { return (u32)c * 0x1111u + 0x8880u; }
    __device__ __forceinline__ int get(const int*, u32 sel) const {
        int out;   // prmt: a selector nibble with its high bit set replicates the sign
        asm("prmt.b32 %0, %1, %2, %3;" : "=r"(out) : "r"(lo), "r"(hi), "r"(sel));
        return out;
    }
};

// Any alphabet: one shared-memory load per cell.
template <>
struct Scores<false> {
    int base;
    __device__ __forceinline__ void load(const int*, int alpha, int qr) { base = qr * alpha; }
    static __device__ __forceinline__ u32 selector(int c) { return (u32)c; }
    __device__ __forceinline__ int get(const int* sm, u32 sel) const {
        return sm[base + (int)(sel & 0xffffu)];
    }
};

// The first best cell in row-major order, of those above 0. A lane's rows come column
// by column, so a tie replaces the best only from an earlier row.
struct Best {
    int v, i, j, o;
    int floor;     // the least H (as hm) that may replace the best: max(v, 1) - goe
    __device__ __forceinline__ void init(int h, int goe) { v = 0; i = h + 1; j = 0; o = 0; floor = 1 - goe; }
    __device__ __forceinline__ void offer(int hm, int goe, int row, int col, int origin) {
        const int hv = hm + goe;
        if (hv > v || row < i) { v = hv; i = row; j = col; o = origin; floor = hm; }
    }
    __device__ __forceinline__ void reduce() {
        for (int d = 16; d; d >>= 1) {
            int v2 = __shfl_down_sync(FULL_MASK, v, d), i2 = __shfl_down_sync(FULL_MASK, i, d);
            int j2 = __shfl_down_sync(FULL_MASK, j, d), o2 = __shfl_down_sync(FULL_MASK, o, d);
            if (v2 > v || (v2 == v && i2 < i)) { v = v2; i = i2; j = j2; o = o2; }
        }
    }
};

// Loads and stores of progress counters, at GPU scope, or at system scope (SYS) for a
// row that a launch on another GPU writes or reads in pinned host memory.
template <bool SYS>
__device__ __forceinline__ int load_acquire(const int* counter) {
    int seen;
    if (SYS) asm volatile("ld.acquire.sys.global.s32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
    else asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(seen) : "l"(counter) : "memory");
    return seen;
}

// Wait (one lane) until a counter reaches `need`; the writes it counts are then visible.
template <bool SYS = false>
__device__ __forceinline__ void wait_until(const int* counter, int need) {
    while (load_acquire<SYS>(counter) < need) __nanosleep(SYS ? 64 : 32);
}

// Publish the count of columns this thread's writes complete (release: after them).
template <bool SYS = false>
__device__ __forceinline__ void publish(int* counter, int done) {
    if (SYS) asm volatile("st.release.sys.global.s32 [%0], %1;" :: "l"(counter), "r"(done) : "memory");
    else asm volatile("st.release.gpu.global.s32 [%0], %1;" :: "l"(counter), "r"(done) : "memory");
}

// A load of a streamed row that no cache can hold stale.
__device__ __forceinline__ int load_sys(const int* p) {
    int v;
    asm volatile("ld.relaxed.sys.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

// One tier (lt of the launch's, b of the tile's): rows [start, start + 32R).
template <int R, bool LOCAL, bool ORIGINS, bool PACKED, bool TAIL>
__device__ __forceinline__ void tier(const TileArgs& a, const int* sm, int lt, int start) {
    constexpr int NV = ORIGINS ? 4 : 2;
    const int lane = threadIdx.x & (WARP - 1);
    const int h = a.h, w = a.w, goe = a.goe, ge = a.ge, b = a.tier0 + lt;
    const int row0 = start + lane * R;               // tile row of the lane's first row, 0-based
    const int wide4 = (w + 1) * 4;                   // origin stride of a row

    // H (as hm) of the lane's rows at the last column, in two register sets that steps
    // take turns to read and write (no copies); E and origins
    int hm[R], hn[R], ev[R], oh[R], oe[R];
    Scores<PACKED> prof[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int g = min(row0 + r, h - 1);
        hm[r] = max(a.left_h[g], MINUS_INFINITY) - goe;
        ev[r] = max(a.left_e[g], MINUS_INFINITY);
        if (ORIGINS) { oh[r] = (g + 1) * wide4 + STATE_H; oe[r] = (g + 1) * wide4 + STATE_E; }
        prof[r].load(sm, a.alpha, row0 + r < h ? a.q[g] : a.alpha);
    }
    // H (as hm) and origin of the cell diagonal to the lane's first row, column 0
    int diag = max(row0 ? a.left_h[min(row0, h) - 1] : a.corner, MINUS_INFINITY) - goe;
    int odiag = row0 * wide4 + STATE_H;
    // what the lane handed down at its last step: its last row's H (hm), F and origins
    int up_hm = 0, up_f = 0, up_oh = 0, up_of = 0;
    // lane l holds column k0 + l of the tier above's last row, k0 the current chunk
    int in_hm = 0, in_f = 0, in_oh = 0, in_of = 0;
    // where the tier above's last row is, and where this tier's goes
    const bool first = lt == 0, last_in_launch = lt == a.tiers - 1;
    const bool streams_in = first && a.in_ready, streams_out = last_in_launch && a.out_ready;
    const int* above = first ? a.in_row : a.ring + (size_t)(lt - 1) * NV * WINDOW;
    const int above_stride = first ? w : WINDOW, above_mask = first ? -1 : WINDOW - 1;
    int* out = last_in_launch ? a.out_row : a.ring + (size_t)lt * NV * WINDOW;
    const int out_stride = last_in_launch ? w : WINDOW, out_mask = last_in_launch ? -1 : WINDOW - 1;
    // the tier's last row: lane `wl`, register row `rl` (the tile's last row in a tail)
    const int last = min(h, start + WARP * R) - 1 - start;
    const int wl = last / R, rl = last % R;
    int cap_hm = 0, cap_f = 0, cap_oh = 0, cap_of = 0;
    Best best;
    best.init(h, goe);
    if (row0 >= h) best.floor = 0x7fffffff;     // a tail tier's lanes past the last row
    // target residues: lane l holds column k0 + l (t_cur) and prefetches k0 + 32 + l
    // (t_nxt); `pair` holds the score selectors of columns k0 - 32 + l and k0 + l in
    // its low and high halves. Each step works out the selector of the lane's next
    // column.
    int t_cur = 0, t_nxt = lane < w ? a.t[lane] : 0;
    u32 pair = 0, sel_nxt = Scores<PACKED>::selector(t_nxt);
    u32 sel = lane == 0 ? sel_nxt : 0;

    // scores only, outside a tail: the best cell is looked for two steps at a time (one
    // branch for both, which leaves the two steps' code one block to schedule)
    constexpr bool PAIRED = LOCAL && !ORIGINS && !TAIL;
    // the lane's new best cell, if any, among `rows` (H as hm) of step k, whose best is `top`:
    // the first row holding `top`
    auto offer_first = [&](const int (&rows)[R], const int top, const int k) {
        if (top < best.floor) return;
        int first = R - 1;
#pragma unroll
        for (int r = R - 2; r >= 0; --r) first = rows[r] == top ? r : first;
        best.offer(top, goe, row0 + first + 1, k - lane + 1, 0);
    };

    // step k: lane l computes column k - l (when in the tile: `edge` steps check), from
    // H in `cur` to H in `nxt`; its rows' best H (as hm; MINUS_INFINITY when the lane is idle)
    auto step = [&](const int k, const bool edge, int (&cur)[R], int (&nxt)[R]) -> int {
        const int k0 = k & ~(CHUNK - 1);
        if (k == k0) {
            // every CHUNK steps: publish the columns written, wait for the tier above
            // (and for the tier below to be done with the ring), load the next inputs
            pair = Scores<PACKED>::selector(t_cur) | (sel_nxt << 16);
            t_cur = t_nxt;
            t_nxt = k0 + CHUNK + lane < w ? a.t[k0 + CHUNK + lane] : 0;
            sel_nxt = Scores<PACKED>::selector(t_nxt);
            if (lane == wl) {
                publish(a.progress + lt, min(max(k0 - wl, 0), w));
                if (streams_out) publish<true>(a.out_ready, min(max(k0 - wl, 0), w));
            }
            if (k0 < w) {
                if (lane == 0) {
                    if (!first && k0 % SYNC == 0) wait_until(a.progress + lt - 1, min(k0 + SYNC, w));
                    if (streams_in && k0 % SYNC == 0) wait_until<true>(a.in_ready, min(k0 + SYNC, w));
                    if (!last_in_launch && k0 % BACK == 0)
                        wait_until(a.progress + lt + 1, k0 + 2 * BACK + CHUNK - WINDOW);
                }
                __syncwarp();
                const int c = k0 + lane;
                if (c < w) {
                    const int x = c & above_mask;
                    in_hm = (streams_in ? load_sys(above + x) : __ldcg(above + x)) - goe;
                    in_f = streams_in ? load_sys(above + above_stride + x)
                                      : __ldcg(above + above_stride + x);
                    if (ORIGINS) {
                        in_oh = __ldcg(above + 2 * above_stride + x);
                        in_of = __ldcg(above + 3 * above_stride + x);
                    }
                }
            }
        }
        const int chunk_at = k & (CHUNK - 1);
        int r_hm = __shfl_up_sync(FULL_MASK, up_hm, 1), r_f = __shfl_up_sync(FULL_MASK, up_f, 1);
        const int s_hm = __shfl_sync(FULL_MASK, in_hm, chunk_at);
        const int s_f = __shfl_sync(FULL_MASK, in_f, chunk_at);
        // the selector of column k + 1 - lane: from `pair`, or (lane 0, at a chunk's
        // last step) the prefetched t_nxt's
        const int t_at = chunk_at + 1 - lane + CHUNK;
        const u32 t_two = __shfl_sync(FULL_MASK, pair, t_at & (CHUNK - 1));
        int r_oh = 0, r_of = 0;
        if (ORIGINS) {
            r_oh = __shfl_up_sync(FULL_MASK, up_oh, 1);
            r_of = __shfl_up_sync(FULL_MASK, up_of, 1);
            const int s_oh = __shfl_sync(FULL_MASK, in_oh, chunk_at);
            const int s_of = __shfl_sync(FULL_MASK, in_of, chunk_at);
            if (lane == 0) { r_oh = s_oh; r_of = s_of; }
        }
        if (lane == 0) { r_hm = s_hm; r_f = s_f; }
        const int j = k - lane;
        const u32 now = sel;
        sel = t_at == 2 * CHUNK ? sel_nxt : t_two >> ((t_at >> 1) & 16);
        if (edge && (j < 0 || j >= w)) {      // an idle lane keeps its rows
#pragma unroll
            for (int r = 0; r < R; ++r) nxt[r] = cur[r];
            return MINUS_INFINITY;
        }
        int dg = diag, odg = odiag;
        diag = r_hm; odiag = r_oh;
        up_hm = r_hm; up_f = r_f; up_oh = r_oh; up_of = r_of;
        const int here = (j + 1) * 4 + STATE_START + (row0 + 1) * wide4;
        int top = MINUS_INFINITY;     // the step's best H (as hm) over the lane's rows
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int s = prof[r].get(sm, now);
            int hv;
            if (ORIGINS) {
                const int ee = ev[r] - ge;
                const bool xe = ee > cur[r];
                const int e = max(ee, cur[r]);
                const int o_e = xe ? oe[r] : oh[r];
                const int fe = up_f - ge;
                const bool xf = fe > up_hm;
                const int f = max(fe, up_hm);
                const int o_f = xf ? up_of : up_oh;
                hv = dg + s;
                int o = e > hv ? o_e : odg;
                hv = max(hv, e);
                o = f > hv ? o_f : o;
                hv = max(hv, f);
                if (LOCAL) {
                    o = hv <= 0 ? here + r * wide4 : o;
                    hv = max(hv, 0);
                }
                odg = oh[r];
                oh[r] = o; oe[r] = o_e;
                up_oh = o; up_of = o_f;
                ev[r] = e; up_f = f;
                hv -= goe;             // hm again
            } else {
                const int e = Int32::addmax(ev[r], -ge, cur[r]);
                const int f = Int32::addmax(up_f, -ge, up_hm);
                const int d = Int32::addmax(dg, s, e);
                hv = (LOCAL ? Int32::max3relu(d, f, d) : max(d, f));
                hv -= goe;
                ev[r] = e; up_f = f;
            }
            dg = cur[r];
            nxt[r] = hv;
            up_hm = hv;
            if (LOCAL) top = (r & 1) ? Int32::max3(top, nxt[r - 1], hv) : (r == R - 1 ? max(top, hv) : top);
            if (TAIL && r == rl) { cap_hm = up_hm; cap_f = up_f; cap_oh = up_oh; cap_of = up_of; }
        }
        // rarely: a row of this step may hold the lane's new best cell (with origins, or
        // in a tail, every row is offered; else see PAIRED)
        if (LOCAL && !PAIRED && top >= best.floor) {
#pragma unroll
            for (int r = 0; r < R; ++r)
                if (nxt[r] >= best.floor && (!TAIL || row0 + r < h))
                    best.offer(nxt[r], goe, row0 + r + 1, j + 1, ORIGINS ? oh[r] : 0);
        }
        if (lane == wl) {
            const int x = j & out_mask;
            out[x] = (TAIL ? cap_hm : up_hm) + goe;
            out[out_stride + x] = TAIL ? cap_f : up_f;
            if (ORIGINS) {
                out[2 * out_stride + x] = TAIL ? cap_oh : up_oh;
                out[3 * out_stride + x] = TAIL ? cap_of : up_of;
            }
        }
        return top;
    };

    // steps two at a time (hm to hn, hn to hm); all lanes are in the tile from step 31
    // to step w - 1: the steps from 32 to an even step in there check no edge
    const int steps = w + WARP - 1;
    const int full_from = WARP, full_to = max(full_from, w - (w & 1));
    auto two_steps = [&](const int k, const bool edge) {
        const int top0 = step(k, edge, hm, hn), top1 = step(k + 1, edge, hn, hm);
        // rarely: either step may hold the lane's new best cell (measured quicker than
        // offering every row of every step, most on the slabs that the alignment crosses,
        // whose tiers set the launch's pace)
        if (PAIRED && max(top0, top1) >= best.floor) {
            offer_first(hn, top0, k);
            offer_first(hm, top1, k + 1);
        }
    };
    int k = 0;
    for (; k < min(full_from, full_to); k += 2) two_steps(k, true);
    for (; k < full_to; k += 2) two_steps(k, false);
    for (; k + 1 < steps; k += 2) two_steps(k, true);
    if (k < steps) {
        const int top = step(k, true, hm, hn);
        if (PAIRED) offer_first(hn, top, k);
#pragma unroll
        for (int r = 0; r < R; ++r) hm[r] = hn[r];
    }
    if (lane == wl) {
        publish(a.progress + lt, w);
        if (streams_out) publish<true>(a.out_ready, w);
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int g = row0 + r;
        if (g < h) {
            a.right[g] = hm[r] + goe;
            a.right[h + g] = ev[r];
            if (ORIGINS) { a.right[2 * h + g] = oh[r]; a.right[3 * h + g] = oe[r]; }
        }
    }
    if (LOCAL) {
        best.reduce();
        if (lane == 0) {
            int* out_best = a.best + 4 * b;
            out_best[0] = best.v; out_best[1] = best.i; out_best[2] = best.j; out_best[3] = best.o;
        }
    }
}

// The substitution scores in shared memory, and a row of PAD_SCORE for padding residues.
__device__ __forceinline__ void load_scores(int* sm, const int* sub, int alpha) {
    for (int x = threadIdx.x; x < alpha * (alpha + 1); x += blockDim.x)
        sm[x] = x < alpha * alpha ? sub[x] : PAD_SCORE;
    __syncthreads();
}

// Tier lt of the launch's: tiers of 32R rows, then the rest in tiers of 16R rows, the
// last of which may hold the tile's last row inside (a tail): half tiers are quick
// enough that a tail's extra work does not hold the pipeline back.
template <int R, bool LOCAL, bool ORIGINS, bool PACKED>
__device__ __forceinline__ void run_tier(const TileArgs& a, const int* sm, int lt) {
    const int b = a.tier0 + lt, full = a.h / (WARP * R);
    if (b < full) {
        tier<R, LOCAL, ORIGINS, PACKED, false>(a, sm, lt, b * WARP * R);
        return;
    }
    const int start = full * WARP * R + (b - full) * WARP * (R / 2);
    if (start + WARP * (R / 2) > a.h) tier<R / 2, LOCAL, ORIGINS, PACKED, true>(a, sm, lt, start);
    else tier<R / 2, LOCAL, ORIGINS, PACKED, false>(a, sm, lt, start);
}

// This warp's tier of the launch. Launches take the GPU's whole resident grid, and tier
// b goes to warp b / gridDim.x of block b % gridDim.x: a launch of fewer tiers than the
// GPU holds spreads them evenly over the multiprocessors, and consecutive tiers run on
// different ones (measured quicker at every slab height than tiers numbered block by
// block). Warps past the last tier exit.
__device__ __forceinline__ int launch_tier() {
    return (int)((threadIdx.x / WARP) * gridDim.x + blockIdx.x);
}

// One launch: tiers tier0 .. tier0 + tiers - 1 of the tile, one per warp, all resident.
template <int R, bool LOCAL, bool ORIGINS, bool PACKED>
__global__ void __launch_bounds__(BLOCK) tile_forward(
        const u8* q, const u8* t, const int* sub, const int* left_h, const int* left_e,
        const int* in_row, int* out_row, int* ring, int* progress, int* right, int* best,
        int corner, int h, int w, int alpha, int goe, int ge, int tier0, int tiers,
        const int* in_ready, int* out_ready) {
    const TileArgs a{q, t, sub, left_h, left_e, in_row, out_row, ring, progress, right, best,
                     corner, h, w, alpha, goe, ge, tier0, tiers, in_ready, out_ready};
    extern __shared__ int sm[];
    load_scores(sm, sub, alpha);
    const int lt = launch_tier();
    if (lt < tiers) run_tier<R, LOCAL, ORIGINS, PACKED>(a, sm, lt);
}

// Several whole tiles in one launch, scores only, global mode (the halves of a level of
// path splits). Row k of `tiles` describes tile k: the offset of its rows (in q, left_h,
// left_e, and x 2 in right), of its columns (in t, and x 2 in in_row and out_row), its
// corner H, h, w, and its first tier: warp g runs tier g - first of the last tile whose
// first tier is at most g. Rings and counters are the launch's.

template <int R, bool PACKED>
__global__ void __launch_bounds__(BLOCK) tile_batch(
        const u8* q, const u8* t, const int* sub, const int* left_h, const int* left_e,
        const int* in_row, int* out_row, int* ring, int* progress, int* right,
        const long long* tiles, int count, int total, int alpha, int goe, int ge) {
    extern __shared__ int sm[];
    load_scores(sm, sub, alpha);
    const int g = launch_tier();
    if (g >= total) return;
    int lo = 0, hi = count;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (tiles[(size_t)mid * BATCH_FIELDS + BATCH_FIRST_TIER] <= g) lo = mid; else hi = mid;
    }
    const long long* d = tiles + (size_t)lo * BATCH_FIELDS;
    const long long rows = d[0], columns = d[1];
    const int first = (int)d[BATCH_FIRST_TIER];
    const int next = lo + 1 < count ? (int)tiles[(size_t)(lo + 1) * BATCH_FIELDS + BATCH_FIRST_TIER]
                                    : total;
    const TileArgs a{q + rows, t + columns, sub, left_h + rows, left_e + rows,
                     in_row + 2 * columns, out_row + 2 * columns,
                     ring + (size_t)first * 2 * WINDOW, progress + first, right + 2 * rows,
                     nullptr, (int)d[2], (int)d[3], (int)d[4], alpha, goe, ge, 0, next - first,
                     nullptr, nullptr};
    run_tier<R, false, false, PACKED>(a, sm, g - first);
}
