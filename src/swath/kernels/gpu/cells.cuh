// Cell arithmetic for the DP kernels: one type per lane width.
//
// Packed16: two targets side by side in the 16-bit halves of a 32-bit register
// (low half: the first target). Int32: one target, exact 32-bit arithmetic.
// On sm_90 the DPX instructions fuse an add with a max and a 3-way max with a ReLU;
// other architectures get the same results from plain SIMD-in-register operations.
#pragma once

typedef unsigned int u32;
typedef unsigned char u8;
typedef long long i64;

struct Packed16 {
    typedef u32 T;
    static constexpr int LANES = 2;
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
    // Scores of profile row k (0..R-1) from two rows of 16-bit scores, word-packed.
    static __device__ __forceinline__ T score(u32 a, u32 b, int k) {
        return __byte_perm(a, b, (k & 1) ? 0x7632 : 0x5410);
    }
};

struct Int32 {
    typedef int T;
    static constexpr int LANES = 1;
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
    static __device__ __forceinline__ T score(u32 a, u32, int k) {
        return (int)(short)((k & 1) ? (a >> 16) : (a & 0xffffu));
    }
};
