// Cell arithmetic for the DP kernels: one type per lane width (and the warp helpers
// their steps share: FULL_MASK, Flag).
//
// Packed16: two targets side by side in the 16-bit halves of a 32-bit register
// (low half: the first target). QueryPacked16: the same arithmetic, with two query
// streams side by side against one target. Int32: one target, exact 32-bit arithmetic.
//
// The search kernel reads its score profile in 16-byte chunks; each cell type says
// how many targets a group aligns (TARGETS), how many query streams (QUERIES), which
// lanes hold a stream (stream_mask), what a profile word is (Word) and turns one chunk of
// profile rows into CHUNK cell scores.
// On sm_90 the DPX instructions fuse an add with a max and a 3-way max with a ReLU;
// other architectures get the same results from plain SIMD-in-register operations.
#pragma once

typedef unsigned int u32;
typedef unsigned char u8;
typedef long long i64;

#define FULL_MASK 0xffffffffu   // every lane of a warp (shuffles, reductions)

// A compile-time bool for a step's variants (with or without bounds checks, boundary
// selects): `step(Flag<true>(), ...)`.
template <bool B> struct Flag { static constexpr bool value = B; };

struct Packed16 {
    typedef u32 T;
    typedef short Word;                // profile: one 16-bit score per row
    static constexpr int LANES = 2;
    static constexpr int TARGETS = 2;
    static constexpr int QUERIES = 1;
    static constexpr int CHUNK = 8;    // profile rows per 16-byte chunk
    static constexpr int CEILING = 32767;
    static constexpr int FLOOR = -32768;
    static __device__ __forceinline__ T splat(int v) {
        u32 x = (u32)v & 0xffffu;
        return x | (x << 16);
    }
    static __device__ __forceinline__ T add(T a, T b) { return __vadd2(a, b); }
    static __device__ __forceinline__ T max(T a, T b) { return __vmaxs2(a, b); }
    // max(a + b, c)
    static __device__ __forceinline__ T addmax(T a, T b, T c) {
#if __CUDA_ARCH__ >= 900
        return __viaddmax_s16x2(a, b, c);
#else
        return __vmaxs2(__vadd2(a, b), c);
#endif
    }
    // max(a, b, c, 0)
    static __device__ __forceinline__ T max3relu(T a, T b, T c) {
#if __CUDA_ARCH__ >= 900
        return __vimax3_s16x2_relu(a, b, c);
#else
        return __vmaxs2(__vmaxs2(__vmaxs2(a, b), c), 0u);
#endif
    }
    // max(a, b, c)
    static __device__ __forceinline__ T max3(T a, T b, T c) {
#if __CUDA_ARCH__ >= 900
        return __vimax3_s16x2(a, b, c);
#else
        return __vmaxs2(__vmaxs2(a, b), c);
#endif
    }
    static __device__ __forceinline__ int lane(T x, int k) {
        return (int)(short)(k ? (x >> 16) : (x & 0xffffu));
    }
    // Take lane l of x into v.
    static __device__ __forceinline__ T merge(T v, T x, int l) {
        return l ? __byte_perm(v, x, 0x7610) : __byte_perm(v, x, 0x3254);
    }
    // The lanes of query stream s (both: the two targets share one query).
    static __device__ __forceinline__ T stream_mask(int) { return 0xffffffffu; }
    // Lanes of b where mask is set, of a elsewhere.
    static __device__ __forceinline__ T select(T a, T b, T mask) { return (a & ~mask) | (b & mask); }
    static __device__ __forceinline__ Word biased(Word p, int open) { return (Word)(p + open); }
    // Scores of 8 rows for both targets: a chunk of each target's profile row, paired
    // half by half.
    static __device__ __forceinline__ void chunk(const uint4* const (&rows)[TARGETS], int at,
                                                 T (&sc)[CHUNK]) {
        const uint4 wa = rows[0][at], wb = rows[1][at];
        const u32 a4[4] = {wa.x, wa.y, wa.z, wa.w};
        const u32 b4[4] = {wb.x, wb.y, wb.z, wb.w};
#pragma unroll
        for (int k = 0; k < CHUNK; ++k)
            sc[k] = __byte_perm(a4[k / 2], b4[k / 2], (k & 1) ? 0x7632 : 0x5410);
    }
};

// Two queries (low half: the first) against one target: the profile word of a row holds
// both queries' scores, so a chunk is 4 rows' scores as they are, with no pairing.
struct QueryPacked16 : Packed16 {
    typedef u32 Word;
    static constexpr int TARGETS = 1;
    static constexpr int QUERIES = 2;
    static constexpr int CHUNK = 4;
    static __device__ __forceinline__ T stream_mask(int s) { return s ? 0xffff0000u : 0xffffu; }
    static __device__ __forceinline__ Word biased(Word p, int open) {
        return __vadd2(p, splat(open));
    }
    static __device__ __forceinline__ void chunk(const uint4* const (&rows)[TARGETS], int at,
                                                 T (&sc)[CHUNK]) {
        const uint4 w = rows[0][at];
        sc[0] = w.x;
        sc[1] = w.y;
        sc[2] = w.z;
        sc[3] = w.w;
    }
};

struct Int32 {
    typedef int T;
    typedef short Word;
    static constexpr int LANES = 1;
    static constexpr int TARGETS = 1;
    static constexpr int QUERIES = 1;
    static constexpr int CHUNK = 8;
    static constexpr int CEILING = 2147483647;
    static constexpr int FLOOR = -2147483647 - 1;
    static __device__ __forceinline__ T splat(int v) { return v; }
    static __device__ __forceinline__ T add(T a, T b) { return a + b; }
    static __device__ __forceinline__ T max(T a, T b) { return ::max(a, b); }
    static __device__ __forceinline__ T addmax(T a, T b, T c) {
#if __CUDA_ARCH__ >= 900
        return __viaddmax_s32(a, b, c);
#else
        return ::max(a + b, c);
#endif
    }
    static __device__ __forceinline__ T max3relu(T a, T b, T c) {
#if __CUDA_ARCH__ >= 900
        return __vimax3_s32_relu(a, b, c);
#else
        return ::max(::max(::max(a, b), c), 0);
#endif
    }
    static __device__ __forceinline__ T max3(T a, T b, T c) {
#if __CUDA_ARCH__ >= 900
        return __vimax3_s32(a, b, c);
#else
        return ::max(::max(a, b), c);
#endif
    }
    static __device__ __forceinline__ int lane(T x, int) { return x; }
    static __device__ __forceinline__ T merge(T, T x, int) { return x; }
    static __device__ __forceinline__ T stream_mask(int) { return -1; }
    static __device__ __forceinline__ T select(T a, T b, T mask) { return (a & ~mask) | (b & mask); }
    static __device__ __forceinline__ Word biased(Word p, int open) { return (Word)(p + open); }
    static __device__ __forceinline__ void chunk(const uint4* const (&rows)[TARGETS], int at,
                                                 T (&sc)[CHUNK]) {
        const uint4 w = rows[0][at];
        const u32 a4[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int k = 0; k < CHUNK; ++k)
            sc[k] = (int)(short)((k & 1) ? (a4[k / 2] >> 16) : (a4[k / 2] & 0xffffu));
    }
};
