// One tile of a long pair's matrix on the GPU: the twin of kernels/cpu/tiles.py.
//
// The tile's rows are cut into bands of 32 * R rows. A warp computes a band left to
// right: lane l holds rows l * R .. l * R + R - 1 of the band in registers and works
// one column behind lane l - 1, whose last row's H and F it takes by a shuffle (the
// band is a wavefront of lanes). Lane 0 takes its top input from the band above: that
// band's last row, which its warp writes to global memory and publishes, CHUNK columns
// at a time, behind a progress counter. Warps are persistent: warp g computes bands g,
// g + warps, ... in one launch, and waits on counters instead of relaunches
// (StripedScore, with bands in the part of strips). Every band's last row stays in
// global memory: the tile's bottom row is the last band's.
//
// Values are int32, kept as H - gap_open - gap_extend ("hm") so that one DPX
// instruction (max(a + b, c)) serves each of E, F and H; the substitution scores come
// shifted by the same amount. Recurrences and tie rules are the CPU twin's: a gap opens
// unless extending scores strictly more; H takes the diagonal unless E, then F, scores
// strictly more; in local mode a cell at or below 0 starts an alignment.
//
// With ORIGINS every cell and state also carries its origin, tile-local: ((row *
// (w + 1)) + column) * 4 + state, state H, E, F or START.
#include "cells.cuh"

constexpr int WARP = 32;
constexpr unsigned FULL = 0xffffffffu;
constexpr int NEG = -(1 << 30);
constexpr int CHUNK = 32;   // columns a band publishes at a time (one per lane)
constexpr int ST_H = 0, ST_E = 1, ST_F = 2, ST_START = 3;

struct TileArgs {
    const u8* q;                 // h query residues (the tile's rows)
    const u8* t;                 // w target residues (its columns)
    const int* sub;              // alpha x alpha, scores + gap_open + gap_extend
    const int* top_h;            // w + 1: H on the row above the tile, index 0 the corner
    const int* top_f;            // w + 1: F there (index 0 unused)
    const int* left_h;           // h: H on the column left of the tile
    const int* left_e;           // h: E there
    int* rows;                   // bands x NV x w: every band's last row (H, F[, oH, oF])
    int* progress;               // bands: columns of its last row published
    int* right;                  // NV x h: the tile's last column (H, E[, oH, oE])
    int* best;                   // bands x 4: first best cell (score, row, column, origin)
    int h, w, alpha, goe, ge, bands;
};

__device__ __forceinline__ int load_cg(const int* p) { return __ldcg(p); }

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
            u32 b = (u32)(sm[qr * alpha + c] & 0xff);
            if (c < 4) lo |= b << (8 * c); else hi |= b << (8 * (c - 4));
        }
    }
    static __device__ __forceinline__ u32 selector(int c) {
        u32 s = (u32)c | 8u;
        return (u32)c | (s << 4) | (s << 8) | (s << 12);
    }
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
    __device__ __forceinline__ int get(const int* sm, u32 sel) const { return sm[base + (int)sel]; }
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
            int v2 = __shfl_down_sync(FULL, v, d), i2 = __shfl_down_sync(FULL, i, d);
            int j2 = __shfl_down_sync(FULL, j, d), o2 = __shfl_down_sync(FULL, o, d);
            if (v2 > v || (v2 == v && i2 < i)) { v = v2; i = i2; j = j2; o = o2; }
        }
    }
};

// One band: rows [b * 32R, b * 32R + 32R) of the tile, all w columns.
template <int R, bool LOCAL, bool ORIGINS, bool PACKED, bool TAIL>
__device__ __forceinline__ void band(const TileArgs& a, const int* sm, int b) {
    constexpr int NV = ORIGINS ? 4 : 2;
    const int lane = threadIdx.x & (WARP - 1);
    const int h = a.h, w = a.w, goe = a.goe, ge = a.ge;
    const int row0 = b * WARP * R + lane * R;        // tile row of the lane's first row, 0-based
    const int wide4 = (w + 1) * 4;                   // origin stride of a row

    int hm[R], ev[R], oh[R], oe[R];
    Scores<PACKED> prof[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int g = min(row0 + r, h - 1);
        hm[r] = max(a.left_h[g], NEG) - goe;
        ev[r] = max(a.left_e[g], NEG);
        if (ORIGINS) { oh[r] = (g + 1) * wide4 + ST_H; oe[r] = (g + 1) * wide4 + ST_E; }
        prof[r].load(sm, a.alpha, a.q[g]);
    }
    // H (as hm) and origin of the cell diagonal to the lane's first row, column 0
    int diag = max(row0 ? a.left_h[min(row0, h) - 1] : a.top_h[0], NEG) - goe;
    int odiag = row0 * wide4 + ST_H;
    // what the lane handed down at its last step: its last row's H (hm), F and origins
    int up_hm = 0, up_f = 0, up_oh = 0, up_of = 0;
    // lane l holds column k0 + l of the band above's last row, k0 the current chunk
    int in_hm = 0, in_f = 0, in_oh = 0, in_of = 0;
    const int* above = b ? a.rows + (size_t)(b - 1) * NV * w : nullptr;
    int* out = a.rows + (size_t)b * NV * w;
    // the band's last row: lane `wl`, register row `rl` (the tile's last row in a tail)
    const int last = min(h, (b + 1) * WARP * R) - 1 - b * WARP * R;
    const int wl = last / R, rl = last % R;
    int cap_hm = 0, cap_f = 0, cap_oh = 0, cap_of = 0;
    Best best;
    best.init(h, goe);
    u8 t_next = a.t[0];

    for (int k = 0; k < w + WARP - 1; ++k) {
        if ((k & (CHUNK - 1)) == 0 && k < w) {
            const int c = k + lane;
            if (b) {
                if (lane == 0) {
                    const volatile int* flag = a.progress + b - 1;
                    const int need = min(k + CHUNK, w);
                    while (*flag < need) __nanosleep(64);
                    __threadfence();
                }
                __syncwarp();
                if (c < w) {
                    in_hm = load_cg(above + c) - goe;
                    in_f = load_cg(above + w + c);
                    if (ORIGINS) { in_oh = load_cg(above + 2 * w + c); in_of = load_cg(above + 3 * w + c); }
                }
            } else if (c < w) {
                in_hm = max(a.top_h[c + 1], NEG) - goe;
                in_f = max(a.top_f[c + 1], NEG);
                in_oh = (c + 1) * 4 + ST_H;
                in_of = (c + 1) * 4 + ST_F;
            }
        }
        int r_hm = __shfl_up_sync(FULL, up_hm, 1), r_f = __shfl_up_sync(FULL, up_f, 1);
        const int s_hm = __shfl_sync(FULL, in_hm, k & (CHUNK - 1));
        const int s_f = __shfl_sync(FULL, in_f, k & (CHUNK - 1));
        int r_oh = 0, r_of = 0;
        if (ORIGINS) {
            r_oh = __shfl_up_sync(FULL, up_oh, 1);
            r_of = __shfl_up_sync(FULL, up_of, 1);
            const int s_oh = __shfl_sync(FULL, in_oh, k & (CHUNK - 1));
            const int s_of = __shfl_sync(FULL, in_of, k & (CHUNK - 1));
            if (lane == 0) { r_oh = s_oh; r_of = s_of; }
        }
        if (lane == 0) { r_hm = s_hm; r_f = s_f; }
        const int j = k - lane;
        if (j < 0 || j >= w) continue;
        const u32 sel = Scores<PACKED>::selector(t_next);
        if (j + 1 < w) t_next = a.t[j + 1];
        int dg = diag, odg = odiag;
        diag = r_hm; odiag = r_oh;
        up_hm = r_hm; up_f = r_f; up_oh = r_oh; up_of = r_of;
        const int here = (j + 1) * 4 + ST_START + (row0 + 1) * wide4;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int s = prof[r].get(sm, sel);
            int hv;
            if (ORIGINS) {
                const int ee = ev[r] - ge;
                const bool xe = ee > hm[r];
                const int e = max(ee, hm[r]);
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
                const int e = Int32::addmax(ev[r], -ge, hm[r]);
                const int f = Int32::addmax(up_f, -ge, up_hm);
                const int d = Int32::addmax(dg, s, e);
                hv = (LOCAL ? Int32::max3relu(d, f, d) : max(d, f));
                hv -= goe;
                ev[r] = e; up_f = f;
            }
            dg = hm[r];
            hm[r] = hv;
            up_hm = hv;
            if (LOCAL && hv >= best.floor && (!TAIL || row0 + r < h))
                best.offer(hv, goe, row0 + r + 1, j + 1, up_oh);
            if (TAIL && r == rl) { cap_hm = up_hm; cap_f = up_f; cap_oh = up_oh; cap_of = up_of; }
        }
        if (lane == wl) {
            const int o_hm = TAIL ? cap_hm : up_hm, o_f = TAIL ? cap_f : up_f;
            out[j] = o_hm + goe;
            out[w + j] = o_f;
            if (ORIGINS) { out[2 * w + j] = TAIL ? cap_oh : up_oh; out[3 * w + j] = TAIL ? cap_of : up_of; }
            if (((j + 1) & (CHUNK - 1)) == 0 || j == w - 1) {
                __threadfence();
                *(volatile int*)(a.progress + b) = j + 1;
            }
        }
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

template <int R, bool LOCAL, bool ORIGINS, bool PACKED>
__global__ void __launch_bounds__(128) tile_forward(
        const u8* q, const u8* t, const int* sub, const int* top_h, const int* top_f,
        const int* left_h, const int* left_e, int* rows, int* progress, int* right, int* best,
        int h, int w, int alpha, int goe, int ge, int bands) {
    const TileArgs a{q, t, sub, top_h, top_f, left_h, left_e, rows, progress, right, best,
                     h, w, alpha, goe, ge, bands};
    extern __shared__ int sm[];
    for (int x = threadIdx.x; x < a.alpha * a.alpha; x += blockDim.x) sm[x] = a.sub[x];
    __syncthreads();
    const int warps = gridDim.x * (blockDim.x / WARP);
    for (int b = blockIdx.x * (blockDim.x / WARP) + threadIdx.x / WARP; b < a.bands; b += warps) {
        if ((b + 1) * WARP * R > a.h) band<R, LOCAL, ORIGINS, PACKED, true>(a, sm, b);
        else band<R, LOCAL, ORIGINS, PACKED, false>(a, sm, b);
    }
}
