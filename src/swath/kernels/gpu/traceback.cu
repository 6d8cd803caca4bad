// Batched alignment with traceback: many (query, target) pairs, one pair a group, each
// computed whole (pairs with a band from ends.cu go to codes16.cu).
//
// m: query length, n: target length, G: threads of a group, R: query rows per thread,
// PASS_ROWS = G * R rows per pass, P = ceil(m / PASS_ROWS) passes of S = n + G - 1 steps
// (walk.cuh: the band of every column, and where each code goes).
//
// fill: the group computes the exact 32-bit DP of its pair as in search.cu (rows in
// registers, target columns streaming, warp shuffles between threads, H and F of a
// pass's last row spilled for the next pass) and writes each cell's 4-bit direction
// code (walk.cuh's SourceCodes: H's source, SOURCE_START, SOURCE_DIAGONAL, SOURCE_E or
// SOURCE_F, plus E_EXTENDED where E extended E and F_EXTENDED where F extended F), with
// the tie rules of swath.kernels.cpu.traceback.
// Thread t's 16 codes of one step form one 64-bit word; the G words of a step are
// adjacent (anti-diagonal-major), so a step's writes coalesce.
//
// Then, in the same kernel, the thread that holds the pair's end cell follows the codes
// back from it (walk_pair) and writes the start coordinates and the extended CIGAR as
// text: the group's codes were just written, so the walk mostly reads them from L2, and
// its memory latency hides behind the fill of other warps.
//
// With DIRS false, fill writes no codes: it gives each pair's score and end cell only
// (score_ends).
//
// With ENDS (global mode only), terminal gaps cost end_open + k * end_extend: row 0 and
// column 0 start from them, E takes them in the pair's last row and F in its last column
// (the walk reads the codes as they are). Without ENDS the end costs are not read: the
// kernel is the one it was without them.
//
// MODE_*, SOURCE_*, E_EXTENDED, F_EXTENDED, BLOCK and BAND_FREE are swath.constants, given
// at compile time.
#include "walk.cuh"

// At most 128 registers (4 blocks an SM): the semiglobal fill takes 119 to 125 without
// spilling; the local one 128, spilling a few words per pass (none in the steps)
template <int G, int R, int MODE, bool DIRS, bool ENDS>
__global__ void __launch_bounds__(BLOCK, 4) traceback_fill(
    const u8* __restrict__ q_res, const i64* __restrict__ q_start, const int* __restrict__ q_len,
    const u8* __restrict__ t_res, const i64* __restrict__ t_start, const int* __restrict__ t_len,
    int count,                         // pairs (in processing order), one a group
    const short* __restrict__ matrix,  // (A, A)
    int A, int gap_open, int gap_extend,
    int end_open, int end_extend,      // terminal gaps (read with ENDS only)
    int* __restrict__ spill,           // 2 * n words per pair, when P > 1
    const i64* __restrict__ spill_at,
    u64* __restrict__ dirs,            // P * S * G words per pair
    const i64* __restrict__ dirs_at,
    int* __restrict__ out,             // (pairs, 3): score, end row, end column
    // DIRS: start cells (pairs, 2), the CIGAR text, written backwards to end at
    // 2 * slot_at[p] + 2 * (m + n), and its length (-1: the path left the computed columns)
    int* __restrict__ starts, char* __restrict__ cigar, const i64* __restrict__ slot_at,
    int* __restrict__ cigar_len)
{
    constexpr int PASS_ROWS = G * R;
    extern __shared__ short sub[];
    for (int idx = threadIdx.x; idx < A * A; idx += blockDim.x) sub[idx] = matrix[idx];
    __syncthreads();

    const int t = threadIdx.x % G;
    const int group = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    const bool real = group < count;
    const int p = real ? group : 0;
    const int m = real ? q_len[p] : 0;
    const int n = real ? t_len[p] : 0;
    const u8* q = q_res + (real ? q_start[p] : 0);
    const u8* tg = t_res + (real ? t_start[p] : 0);
    const int passes = (m + PASS_ROWS - 1) / PASS_ROWS;
    const int S = pass_steps<G, PASS_ROWS>(n, -BAND_FREE, BAND_FREE);
    u64* my_dirs = dirs + (real ? dirs_at[p] : 0);
    int* my_spill = spill + (real && passes > 1 ? spill_at[p] : 0);
    const int goe = -(gap_open + gap_extend), ge = -gap_extend;
    const int end_goe = -(end_open + end_extend), end_ge = -end_extend;
    // row 0's and column 0's gaps
    const int lead_open = ENDS ? end_open : gap_open, lead_extend = ENDS ? end_extend : gap_extend;
    const int neg_inf = Int32::FLOOR + (ENDS ? ::max(gap_extend, end_extend) : gap_extend);

    const int steps = __reduce_max_sync(FULL_MASK, n > 0 ? S : 0);
    const int all_passes = __reduce_max_sync(FULL_MASK, passes);
    int best = MODE == MODE_LOCAL ? 0 : Int32::FLOOR, best_row = 0, best_col = 0;

    for (int pass = 0; pass < all_passes; ++pass) {
        const bool live = pass < passes;
        const int row0 = pass * PASS_ROWS + t * R;
        // H of the previous column in one array, of this column in the other: the step loop
        // runs two columns an iteration, so no register is copied (a step skipped before
        // a thread's first column finds the boundary in both)
        int Ha[R], Hb[R], E[R], qrow[R], col_best[R], val_best[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int r = row0 + k + 1;
            Ha[k] = MODE == MODE_LOCAL ? 0 : -(lead_open + lead_extend * r);
            Hb[k] = Ha[k];
            E[k] = neg_inf;
            qrow[k] = (r <= m ? q[r - 1] : 0) * A;
            val_best[k] = 0;
            col_best[k] = 0;
        }
        // H(row0, 0)
        int diag = MODE == MODE_LOCAL || row0 == 0 ? 0 : -(lead_open + lead_extend * row0);
        int out_h = diag, out_f = neg_inf;
        const int row_m = m - 1 - row0;
        const bool holds_m =
            MODE != MODE_LOCAL && live && pass == passes - 1 && row_m >= 0 && row_m < R;

        auto step = [&](const int s, const int (&prev)[R], int (&next)[R]) {
            int in_h = __shfl_up_sync(FULL_MASK, out_h, 1, G);
            int in_f = __shfl_up_sync(FULL_MASK, out_f, 1, G);
            const int c = 1 + s - t;
            if (!live || c < 1 || c > n) return;
            if (t == 0) {
                if (pass == 0) {
                    in_h = MODE == MODE_GLOBAL ? -(lead_open + lead_extend * c) : 0;
                    in_f = neg_inf;
                } else {
                    in_h = my_spill[2 * (c - 1)];
                    in_f = my_spill[2 * (c - 1) + 1];
                }
            }
            const short* column = sub + tg[c - 1];
            int up_h = in_h, up_f = in_f, dg = diag;
            u64 word = 0;
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const int left = prev[k];
                // ENDS: the last row's E and the last column's F are terminal gaps
                const bool last_row = ENDS && row0 + k + 1 == m, last_col = ENDS && c == n;
                const int e_open = left + (last_row ? end_goe : goe);
                const int e_ext = E[k] + (last_row ? end_ge : ge);
                const int e = ::max(e_open, e_ext);
                const int f_open = up_h + (last_col ? end_goe : goe);
                const int f_ext = up_f + (last_col ? end_ge : ge);
                const int f = ::max(f_open, f_ext);
                const int d = dg + column[qrow[k]];
                const int hr = Int32::max3(d, e, f);
                int src = hr == d ? SOURCE_DIAGONAL : (hr == e ? SOURCE_E : SOURCE_F);
                int h = hr;
                if (MODE == MODE_LOCAL && hr <= 0) {
                    h = 0;
                    src = SOURCE_START;
                }
                const u64 code = (u64)(src | (e_ext > e_open ? E_EXTENDED : 0)
                                       | (f_ext > f_open ? F_EXTENDED : 0));
                if (DIRS) word |= code << (4 * k);
                if (MODE == MODE_LOCAL && h > val_best[k]) {
                    val_best[k] = h;
                    col_best[k] = c;
                }
                E[k] = e;
                dg = left;
                next[k] = h;
                up_h = h;
                up_f = f;
            }
            if (DIRS) my_dirs[((i64)pass * S + s) * G + t] = word;
            diag = in_h;
            out_h = up_h;
            out_f = up_f;
            if (t == G - 1 && pass < passes - 1) {
                my_spill[2 * (c - 1)] = out_h;
                my_spill[2 * (c - 1) + 1] = out_f;
            }
            if (holds_m) {
                int v = next[0];
#pragma unroll
                for (int k = 1; k < R; ++k)
                    if (k == row_m) v = next[k];
                if ((MODE == MODE_SEMIGLOBAL && v > best) || (MODE == MODE_GLOBAL && c == n)) {
                    best = v;
                    best_col = c;
                }
            }
        };
        for (int s = 0; s < steps; s += 2) {
            step(s, Ha, Hb);
            if (s + 1 < steps) step(s + 1, Hb, Ha);
        }
        if (MODE == MODE_LOCAL && live) {
            // rows ascend with k and with passes: strict > keeps the first best row
#pragma unroll
            for (int k = 0; k < R; ++k) {
                if (row0 + k + 1 <= m && val_best[k] > best) {
                    best = val_best[k];
                    best_row = row0 + k + 1;
                    best_col = col_best[k];
                }
            }
        }
        __syncwarp();
    }

    if (MODE == MODE_LOCAL) {
        // group best; ties go to the smaller row (row-major first cell)
        for (int off = G / 2; off > 0; off /= 2) {
            const int ob = __shfl_xor_sync(FULL_MASK, best, off, G);
            const int orow = __shfl_xor_sync(FULL_MASK, best_row, off, G);
            const int ocol = __shfl_xor_sync(FULL_MASK, best_col, off, G);
            if (ob > best || (ob == best && orow < best_row)) {
                best = ob;
                best_row = orow;
                best_col = ocol;
            }
        }
    }
    // the thread that holds the end cell writes it, and walks from it once the group's
    // codes are all written (a pair without rows: thread 0, from (0, 0))
    const int row_m = m - 1 - (passes - 1) * PASS_ROWS - t * R;
    const bool writer = real && (MODE == MODE_LOCAL ? t == 0 : row_m >= 0 && row_m < R);
    if (writer) {
        out[3 * p] = best;
        out[3 * p + 1] = MODE == MODE_LOCAL ? best_row : m;
        out[3 * p + 2] = best_col;
    }
    if (DIRS) {
        __syncwarp();
        if (writer || (real && m == 0 && t == 0)) {
            const int i = m == 0 ? 0 : (MODE == MODE_LOCAL ? best_row : m);
            const int j = m == 0 ? 0 : best_col;
            cigar_len[p] = walk_pair<G, R, SourceCodes>(
                q, tg, n, -BAND_FREE, BAND_FREE, S, my_dirs, MODE,
                cigar + 2 * (slot_at[p] + m + n), i, j, starts + 2 * p, best, matrix, A,
                gap_open, gap_extend);
        }
    }
}

// Copy each pair's CIGAR text from its slot to its place in the packed result.
__global__ void compact_text(const char* __restrict__ cigar, const i64* __restrict__ from,
                             const i64* __restrict__ to, const int* __restrict__ length,
                             int count, u8* __restrict__ text)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= count) return;
    const char* src = cigar + from[p];
    u8* dst = text + to[p];
    for (int x = 0; x < length[p]; ++x) dst[x] = (u8)src[x];
}

// M, X, L, O and T of each CIGAR of a packed text (swath.identity.cigar_counts, the CPU
// twin): matches, mismatches, columns, gap openings and terminal gap columns; one
// thread a CIGAR. out is (5, count), row-major.
__global__ void cigar_counts(const u8* __restrict__ text, const i64* __restrict__ at, int count,
                             i64* __restrict__ out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    i64 matches = 0, mismatches = 0, columns = 0, opens = 0, terminal = 0, run = 0, last = 0;
    int runs = 0;
    bool last_gap = false;
    for (i64 p = at[k]; p < at[k + 1]; ++p) {
        const u8 c = text[p];
        if (c <= '9') {
            run = run * 10 + (c - '0');
            continue;
        }
        const bool gap = c == 'I' || c == 'D';
        if (c == '=') matches += run;
        if (c == 'X') mismatches += run;
        columns += run;
        opens += gap;
        if (runs == 0 && gap) terminal += run;
        ++runs;
        last = run;
        last_gap = gap;
        run = 0;
    }
    if (runs > 1 && last_gap) terminal += last;
    out[k] = matches;
    out[count + k] = mismatches;
    out[2 * (i64)count + k] = columns;
    out[3 * (i64)count + k] = opens;
    out[4 * (i64)count + k] = terminal;
}
