// The direction codes of banded pairs (those ends.cu took) in 16-bit cells, two pairs a
// register, and their walks.
//
// A group of G = BANDED_GROUP threads takes two pairs (positions 2g and 2g + 1 of the
// launch: low half of each register the first, high half the second), R = TRACEBACK_ROWS
// query rows a thread, passes of PASS_ROWS = G * R rows, in each pair's own band (walk.cuh:
// the columns of a pass, its steps, where each code goes). Step s computes column
// first + s - t of each pair (first: its pass's first column), so the two pairs start
// together; a pair whose pass ends earlier computes columns nobody reads (padding scores
// past its target), and a pair past its passes a pass nobody reads. Cells outside a
// pair's computed columns take the boundary's values, as in traceback.cu, so the traced
// path's cells and codes are those of the whole matrix.
//
// MODE_*, BLOCK, WARP, BANDED_GROUP, TRACEBACK_ROWS, ENDS_PAD_SCORE and CODES_STAGE are
// swath.constants, given at compile time.
//
// The recurrence of ends.cu without its shortcut for F (the codes need H's own
// comparisons): H kept as HG = H - (gap_open + gap_extend), E and F kept extended,
// E - gap_extend and F - gap_extend, so that each of the four comparisons is one DPX
// max that also gives its two predicates (one a pair), which go straight into the codes
// (walk.cuh's CompareCodes):
//   E = max(HG of the left cell, its E - gap_extend)   bit 2: E opens (>=)
//   F = max(HG of the cell above, its F - gap_extend)  bit 3: F opens
//   D = HG of the diagonal cell + score + open
//   max(D, E)                                           bit 1: D >= E
//   H = max(max(D, E), F), local: at least 0            bit 0: max(D, E) >= F
// which are traceback.cu's tie rules (diagonal, then E, then F; opening before
// extending); a local path starts where H = 0. Profiles as in ends.cu (each thread's
// slice of shared memory, padding rows and columns scoring ENDS_PAD_SCORE). Only pairs whose every
// cell fits 16 bits come here (ends.cu's bound, which is wider). A step's codes wait in
// shared memory (after the profiles, CODES_STAGE bytes a warp) and go out two steps at a time.
//
// The end cell: semiglobal, the window's last cell (m, n) (ends.cu's end column is the
// window's last); local, the first cell in row-major order with H = S (ends.cu's score)
// in the last two passes (the window's last 16 rows hold it). Every computed cell of a
// local pair is the score of a path (padding cells lower), so at most S. out, a pair:
// H of its end cell (a local pair without one: -1; the caller compares it with S), its
// row and column. Thread t then walks pair t.
#include "walk.cuh"

template <int MODE>
__global__ void __launch_bounds__(BLOCK, 4) banded_codes(
    const u8* __restrict__ q_res, const i64* __restrict__ q_start, const int* __restrict__ q_len,
    const u8* __restrict__ t_res, const i64* __restrict__ t_start, const int* __restrict__ t_len,
    int count,                         // pairs (processing order); group g: 2g and 2g + 1
    const int* __restrict__ band_lo, const int* __restrict__ band_hi,   // diagonals
    const int* __restrict__ score,     // ends.cu's score of each pair
    const short* __restrict__ matrix,  // (A, A)
    int A, int gap_open, int gap_extend,
    u32* __restrict__ spill,           // n words a pair (HG and F - gap_extend), P > 1
    const i64* __restrict__ spill_at,
    u64* __restrict__ dirs,            // P * S * G words a pair
    const i64* __restrict__ dirs_at,
    int* __restrict__ out,             // (pairs, 3): H of the end cell, its row and column
    // start cells (pairs, 2), the CIGAR text, written backwards to end at
    // 2 * slot_at[p] + 2 * (m + n), and its length (-1: the path left the computed columns)
    int* __restrict__ starts, char* __restrict__ cigar, const i64* __restrict__ slot_at,
    int* __restrict__ cigar_len)
{
    typedef Packed16 C;
    typedef u32 T;
    constexpr int G = BANDED_GROUP, R = TRACEBACK_ROWS, PASS_ROWS = G * R;
    const int open = gap_open + gap_extend;
    extern __shared__ __align__(16) unsigned char smem[];
    // each thread's profile, as in ends.cu: chunk v of row x (x = l * A + a: pair l's
    // scores against residue a, plus open; x = 2 * A: padding) at (x * 2 + v) * BLOCK + i
    uint4* const prof = reinterpret_cast<uint4*>(smem) + threadIdx.x;
    short* const prof16 = reinterpret_cast<short*>(prof);
    auto entry = [&](int x, int k) -> short& { return prof16[((x * 2 + k / 8) * BLOCK) * 8 + k % 8]; };
    for (int k = 0; k < R; ++k) entry(2 * A, k) = (short)(ENDS_PAD_SCORE + open);
    // each warp's codes of two steps, staged after the profiles: chunk (step & 1) * 32 +
    // slot holds the G words of one pair's step (slot: 2 * group + pair, in the warp)
    uint4* const stage = reinterpret_cast<uint4*>(smem) + (2 * A + 1) * 2 * BLOCK
                         + threadIdx.x / WARP * (CODES_STAGE / (int)sizeof(uint4));
    const int lane = threadIdx.x % WARP;
    const int t = threadIdx.x % G;
    const int group = (blockIdx.x * blockDim.x + threadIdx.x) / G;

    // each pair's scalars (arrays a lambda captures go to local memory)
    auto present = [&](int l) { return 2 * group + l < count; };
    const int p0 = 2 * group, p1 = 2 * group + 1;
    const int m0 = present(0) ? q_len[p0] : 0, m1 = present(1) ? q_len[p1] : 0;
    const int n0 = present(0) ? t_len[p0] : 0, n1 = present(1) ? t_len[p1] : 0;
    const int lo0 = present(0) ? band_lo[p0] : 0, lo1 = present(1) ? band_lo[p1] : 0;
    const int hi0 = present(0) ? band_hi[p0] : 0, hi1 = present(1) ? band_hi[p1] : 0;
    const u8* const q0 = q_res + (present(0) ? q_start[p0] : 0);
    const u8* const q1 = q_res + (present(1) ? q_start[p1] : 0);
    const u8* const tg0 = t_res + (present(0) ? t_start[p0] : 0);
    const u8* const tg1 = t_res + (present(1) ? t_start[p1] : 0);
    const int passes0 = (m0 + PASS_ROWS - 1) / PASS_ROWS;
    const int passes1 = (m1 + PASS_ROWS - 1) / PASS_ROWS;
    const int S0 = pass_steps<G, PASS_ROWS>(n0, lo0, hi0);
    const int S1 = pass_steps<G, PASS_ROWS>(n1, lo1, hi1);
    u64* const dirs0 = dirs + (passes0 ? dirs_at[p0] : 0);
    u64* const dirs1 = dirs + (passes1 ? dirs_at[p1] : 0);
    u32* const spill0 = spill + (passes0 > 1 ? spill_at[p0] : 0);
    u32* const spill1 = spill + (passes1 > 1 ? spill_at[p1] : 0);
    const int steps = __reduce_max_sync(FULL_MASK, ::max(passes0 ? S0 : 0, passes1 ? S1 : 0));
    const int all_passes = __reduce_max_sync(FULL_MASK, ::max(passes0, passes1));

    const T goe = C::splat(-open), ge = C::splat(-gap_extend), floor = C::splat(C::FLOOR);
    auto lanes = [](int low, int high) -> T { return ((u32)low & 0xffffu) | ((u32)high << 16); };
    // local: S - open of each pair, negated (a cell's HG minus it is 0 where H = S)
    const T minus_s = MODE == MODE_LOCAL ? lanes(open - (passes0 ? score[p0] : 0),
                                        open - (passes1 ? score[p1] : 0)) : 0;
    // the end cell's H (semiglobal) or row and column (local) of each pair, where found
    int end_h0 = C::FLOOR, end_h1 = C::FLOOR;
    int end_row0 = 0, end_col0 = 0, end_row1 = 0, end_col1 = 0;

    for (int pass = 0; pass < all_passes; ++pass) {
        const bool live0 = pass < passes0, live1 = pass < passes1;
        const int row0 = pass * PASS_ROWS + t * R;       // rows row0 + 1 .. row0 + R
        for (int k = 0; k < R; ++k) {
            const int r = row0 + k + 1;
            const int a0 = live0 && r <= m0 ? q0[r - 1] : -1;
            const int a1 = live1 && r <= m1 ? q1[r - 1] : -1;
            for (int b = 0; b < A; ++b) {
                entry(b, k) = (short)((a0 >= 0 ? matrix[a0 * A + b] : ENDS_PAD_SCORE) + open);
                entry(A + b, k) = (short)((a1 >= 0 ? matrix[a1 * A + b] : ENDS_PAD_SCORE) + open);
            }
        }
        // H of the boundary column (local: 0) and of the row above the pass's first
        const int edge = MODE == MODE_LOCAL || row0 == 0 ? 0 : -(gap_open + gap_extend * row0);
        const u32 edge_word = ((u32)(edge - open) & 0xffffu) | ((u32)C::FLOOR << 16);
        T HGa[R], HGb[R], E[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            HGa[k] = C::splat(
                (MODE == MODE_LOCAL ? 0 : -(gap_open + gap_extend * (row0 + k + 1))) - open);
            HGb[k] = HGa[k];
            E[k] = floor;
        }
        const int2 cols0 = pass_columns<PASS_ROWS>(pass, n0, lo0, hi0);
        const int2 cols1 = pass_columns<PASS_ROWS>(pass, n1, lo1, hi1);
        // the last column each pair's pass above spilled (those after it take the edge)
        const int spilled0 = pass > 0 ? pass_columns<PASS_ROWS>(pass - 1, n0, lo0, hi0).y : 0;
        const int spilled1 = pass > 0 ? pass_columns<PASS_ROWS>(pass - 1, n1, lo1, hi1).y : 0;
        // HG(row0, first - 1): a band cell for thread 0 only, spilled above
        auto corner = [&](bool live, int2 cols, const u32* sp) {
            return t == 0 && live && pass > 0 && 1 < cols.x && cols.x <= cols.y
                ? (int)(short)(sp[cols.x - 2] & 0xffffu) : edge - open;
        };
        T diag = lanes(corner(live0, cols0, spill0), corner(live1, cols1, spill1));
        T out_h = diag, out_f = floor;
        // semiglobal: row m of a pair in this thread's rows (its index here, or -1)
        const int at_m0 = MODE == MODE_SEMIGLOBAL && live0 && pass == passes0 - 1
                          && m0 - 1 - row0 >= 0 && m0 - 1 - row0 < R ? m0 - 1 - row0 : -1;
        const int at_m1 = MODE == MODE_SEMIGLOBAL && live1 && pass == passes1 - 1
                          && m1 - 1 - row0 >= 0 && m1 - 1 - row0 < R ? m1 - 1 - row0 : -1;
        // local: the pairs whose end may lie in this pass (their last two), a lane mask;
        // the key of a step: R - k for the first row k holding H = S (0: none), the
        // pass's best key so far and its column
        const T looks = (MODE == MODE_LOCAL && live0 && pass >= passes0 - 2 ? 0xffffu : 0u)
                      | (MODE == MODE_LOCAL && live1 && pass >= passes1 - 2 ? 0xffff0000u : 0u);
        T pass_key = 0, pass_col = 0;

        // x0, x1: the step's residues of each pair (padding: 2 A, and A for the second
        // pair), w0, w1: thread 0's boundary words (HG and F - gap_extend of the row above)
        auto step = [&](auto search, const int s, const T (&prev)[R], T (&next)[R],
                        const int x0, const int x1, const u32 w0, const u32 w1) {
            T in_h = __shfl_up_sync(FULL_MASK, out_h, 1, G);
            T in_f = __shfl_up_sync(FULL_MASK, out_f, 1, G);
            if (s < t || !(live0 || live1)) return;
            const int c0 = cols0.x + s - t, c1 = cols1.x + s - t;
            if (t == 0) {
                in_h = __byte_perm(w0, w1, 0x5410);
                in_f = __byte_perm(w0, w1, 0x7632);
            }
            const uint4* rows0 = prof + 2 * BLOCK * x0;
            const uint4* rows1 = prof + 2 * BLOCK * (A + x1);
            T up_h = in_h, up_f = in_f, dg = diag, key = 0;
            u32 code[4] = {0, 0, 0, 0};     // pair 0: rows 0-7, 8-15; pair 1: the same
#pragma unroll
            for (int v = 0; v < 2; ++v) {
                const uint4 wa = rows0[v * BLOCK], wb = rows1[v * BLOCK];
                const u32 a4[4] = {wa.x, wa.y, wa.z, wa.w};
                const u32 b4[4] = {wb.x, wb.y, wb.z, wb.w};
                T pair_key = 0;
#pragma unroll
                for (int kk = 0; kk < 8; ++kk) {
                    const int k = v * 8 + kk;
                    const T sc = __byte_perm(a4[kk / 2], b4[kk / 2], (kk & 1) ? 0x7632 : 0x5410);
                    // each comparison's two predicates go into the codes at once (bits
                    // are added: a predicated add each)
                    const int b = 4 * kk;
                    bool hi, low;
                    auto mark = [&](u32 bit) {
                        if (low) code[v] += bit << b;
                        if (hi) code[2 + v] += bit << b;
                    };
                    const T e = __vibmax_s16x2(prev[k], E[k], &hi, &low);
                    mark(4);
                    const T f = __vibmax_s16x2(up_h, up_f, &hi, &low);
                    mark(8);
                    const T de = __vibmax_s16x2(C::add(dg, sc), e, &hi, &low);
                    mark(2);
                    const T h = __vibmax_s16x2(de, f, &hi, &low);
                    mark(1);
                    const T hg = MODE == MODE_LOCAL ? C::addmax(h, goe, goe) : C::add(h, goe);
                    if (MODE == MODE_LOCAL && decltype(search)::value) {
                        // 0 where H = S, else -1; then R - k there, 0 elsewhere
                        const T z = C::addmax(hg, minus_s, C::splat(-1));
                        const T hit = ~z & looks & C::splat(R - k);
                        if (kk & 1) key = C::max3(key, pair_key, hit);
                        else pair_key = hit;
                    }
                    E[k] = C::add(e, ge);
                    dg = prev[k];
                    next[k] = hg;
                    up_h = hg;
                    up_f = C::add(f, ge);
                }
            }
            diag = in_h;
            out_h = up_h;
            out_f = up_f;
            const bool in0 = live0 && c0 <= cols0.y, in1 = live1 && c1 <= cols1.y;
            u64* const staged = reinterpret_cast<u64*>(stage + (s & 1) * 32 + (lane & ~1)) + t;
            staged[0] = ((u64)code[1] << 32) | code[0];
            staged[G] = ((u64)code[3] << 32) | code[2];
            if (t == G - 1) {
                if (in0 && pass < passes0 - 1) spill0[c0 - 1] = __byte_perm(out_h, out_f, 0x5410);
                if (in1 && pass < passes1 - 1) spill1[c1 - 1] = __byte_perm(out_h, out_f, 0x7632);
            }
            if (MODE == MODE_LOCAL && decltype(search)::value) {
                // a step's first hit row beats the pass's so far only if it is above it
                const T above = __vcmpgts2(key, pass_key);
                pass_key = C::max(pass_key, key);
                pass_col = C::select(pass_col, lanes(c0, c1), above);
            }
            if (MODE == MODE_SEMIGLOBAL && ((at_m0 >= 0 && c0 == n0) || (at_m1 >= 0 && c1 == n1))) {
                T v0 = 0, v1 = 0;
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    if (k == at_m0) v0 = next[k];
                    if (k == at_m1) v1 = next[k];
                }
                if (at_m0 >= 0 && c0 == n0) end_h0 = C::lane(v0, 0) + open;
                if (at_m1 >= 0 && c1 == n1) end_h1 = C::lane(v1, 1) + open;
            }
        };
        // the staged codes of steps s and s + 1 to their places, a pair's two steps (its
        // 32 contiguous bytes) by two lanes: whole sectors, where a step's words alone
        // fill half of one (measured quicker than a store a step). A pair's base and steps
        // come from a lane of its group.
        u64* const base0 = dirs0 + (i64)pass * S0 * G;
        u64* const base1 = dirs1 + (i64)pass * S1 * G;
        const int limit0 = live0 ? S0 : 0, limit1 = live1 ? S1 : 0;
        auto flush = [&](const int s) {
            __syncwarp();
#pragma unroll
            for (int round = 0; round < 2; ++round) {
                const int slot = round * 16 + lane / 2, piece = lane & 1;
                const int from = slot & ~1;             // thread 0 of the slot's group
                u64* const b0 = (u64*)__shfl_sync(FULL_MASK, (unsigned long long)base0, from);
                u64* const b1 = (u64*)__shfl_sync(FULL_MASK, (unsigned long long)base1, from);
                const int l0 = __shfl_sync(FULL_MASK, limit0, from);
                const int l1 = __shfl_sync(FULL_MASK, limit1, from);
                const bool second = slot & 1;
                if (s + piece < (second ? l1 : l0))
                    reinterpret_cast<uint4*>((second ? b1 : b0) + (i64)(s + piece) * G)[0] =
                        stage[piece * 32 + slot];
            }
            __syncwarp();
        };
        // what a thread's next two steps read from global memory, loaded an iteration of
        // two steps before their use (L1 holds little beside the profiles): each pair's
        // residues at its columns, and thread 0's boundary words (spilled by the pass
        // above, or the edge's; row 0's is the edge's too)
        auto residue = [&](const u8* p, int n, int c, int pad) -> int {
            return c >= 1 && c <= n ? p[c - 1] : pad;
        };
        auto boundary = [&](bool live, int spilled, const u32* sp, int c) -> u32 {
            return t == 0 && live && c <= spilled ? sp[c - 1] : edge_word;
        };
        auto run = [&](auto search) {
            const int f0 = cols0.x - t, f1 = cols1.x - t;
            int x0a = residue(tg0, n0, f0, 2 * A), x0b = residue(tg0, n0, f0 + 1, 2 * A);
            int x1a = residue(tg1, n1, f1, A), x1b = residue(tg1, n1, f1 + 1, A);
            u32 w0a = boundary(live0, spilled0, spill0, f0);
            u32 w0b = boundary(live0, spilled0, spill0, f0 + 1);
            u32 w1a = boundary(live1, spilled1, spill1, f1);
            u32 w1b = boundary(live1, spilled1, spill1, f1 + 1);
            for (int s = 0; s < steps; s += 2) {
                const int r0a = x0a, r0b = x0b, r1a = x1a, r1b = x1b;
                const u32 v0a = w0a, v0b = w0b, v1a = w1a, v1b = w1b;
                x0a = residue(tg0, n0, f0 + s + 2, 2 * A);
                x0b = residue(tg0, n0, f0 + s + 3, 2 * A);
                x1a = residue(tg1, n1, f1 + s + 2, A);
                x1b = residue(tg1, n1, f1 + s + 3, A);
                w0a = boundary(live0, spilled0, spill0, f0 + s + 2);
                w0b = boundary(live0, spilled0, spill0, f0 + s + 3);
                w1a = boundary(live1, spilled1, spill1, f1 + s + 2);
                w1b = boundary(live1, spilled1, spill1, f1 + s + 3);
                step(search, s, HGa, HGb, r0a, r1a, v0a, v1a);
                if (s + 1 < steps) step(search, s + 1, HGb, HGa, r0b, r1b, v0b, v1b);
                flush(s);
            }
        };
        if (MODE == MODE_LOCAL && __any_sync(FULL_MASK, looks != 0)) run(Flag<true>());
        else run(Flag<false>());
        if (MODE == MODE_LOCAL) {
            // passes ascend in rows: a pair keeps its first pass's hit
            const int key0 = C::lane(pass_key, 0), key1 = C::lane(pass_key, 1);
            if (key0 > 0 && end_row0 == 0) {
                end_row0 = row0 + R - key0 + 1;
                end_col0 = (int)(pass_col & 0xffffu);
            }
            if (key1 > 0 && end_row1 == 0) {
                end_row1 = row0 + R - key1 + 1;
                end_col1 = (int)(pass_col >> 16);
            }
        }
        __syncwarp();
    }

    // the group's end of each pair: semiglobal, the H its thread found; local, the
    // first row found (rows ascend with t in a pass)
    auto first = [](int& row, int& col) {
        const int orow = __shfl_xor_sync(FULL_MASK, row, 1, G);
        const int ocol = __shfl_xor_sync(FULL_MASK, col, 1, G);
        if (orow > 0 && (row == 0 || orow < row)) {
            row = orow;
            col = ocol;
        }
    };
    if (MODE == MODE_LOCAL) {
        first(end_row0, end_col0);
        first(end_row1, end_col1);
    } else {
        end_h0 = ::max(end_h0, __shfl_xor_sync(FULL_MASK, end_h0, 1, G));
        end_h1 = ::max(end_h1, __shfl_xor_sync(FULL_MASK, end_h1, 1, G));
    }
    __syncwarp();
    // thread t: pair t's results and walk
    if (!present(t)) return;
    const int p = 2 * group + t;
    const int m = t ? m1 : m0, n = t ? n1 : n0;
    int h, i, j;
    if (m == 0) {                 // a local pair of score 0: no rows
        h = i = j = 0;
    } else if (MODE == MODE_LOCAL) {
        i = t ? end_row1 : end_row0;
        j = t ? end_col1 : end_col0;
        h = i > 0 ? score[p] : -1;
    } else {
        h = t ? end_h1 : end_h0;
        i = m;
        j = n;
    }
    out[3 * p] = h;
    out[3 * p + 1] = i;
    out[3 * p + 2] = j;
    cigar_len[p] = walk_pair<G, R, CompareCodes>(
        t ? q1 : q0, t ? tg1 : tg0, n, t ? lo1 : lo0, t ? hi1 : hi0, t ? S1 : S0,
        t ? dirs1 : dirs0, MODE, cigar + 2 * (slot_at[p] + m + n), i, j, starts + 2 * p, h,
        matrix, A, gap_open, gap_extend);
}
