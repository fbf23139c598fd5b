// src/kernels/spgemm_team.cuh: SpGEMM building blocks: teams (a group of G lanes or a
// whole CTA) with their scans, the enumeration of a row's products a(i,k)·b(k,j) spread
// evenly over a team, hashing, and the sorts that put a row's columns in order.
#ifndef SD_SPGEMM_TEAM_CUH
#define SD_SPGEMM_TEAM_CUH

#include "spgemm_abi.cuh"

// ------------------------------------------------------------------ operand access

// Value p of B: direct, or through the transpose's permutation (B = Aᵀ, values of A).
static __device__ __forceinline__ float sg_bval(const sd_spgemm_args &a, sd_offset p)
{
    return a.bperm != nullptr ? __ldg(a.bval + __ldg(a.bperm + p)) : __ldg(a.bval + p);
}

// Multiplicative (Fibonacci) hashing: the top LCAP bits of col·⌊2^32/φ⌋.
template <int LCAP>
static __device__ __forceinline__ unsigned sg_hash(int col)
{
    return ((unsigned)col * 2654435769u) >> (32 - LCAP);
}

// ------------------------------------------------------------------ teams
// A team works on one row. Both kinds offer: size, lane, sync(), sum(), excl_scan() (an
// exclusive prefix with the total) and ballot_scan() (the same for 0/1 flags).

// G lanes (a power of two ≤ 32) of one warp.
template <int G>
struct SgGroup {
    static constexpr int size = G;
    int lane;
    unsigned mask;
    __device__ __forceinline__ SgGroup() : lane((int)(threadIdx.x & (G - 1))), mask(sd_group_mask(G)) {}
    __device__ __forceinline__ void sync() const { __syncwarp(mask); }
    __device__ __forceinline__ int sum(int v) const
    {
#pragma unroll
        for (int o = G / 2; o > 0; o >>= 1)
            v += __shfl_xor_sync(mask, v, o, G);
        return v;
    }
    __device__ __forceinline__ int excl_scan(int v, int &total) const
    {
        int x = v;
#pragma unroll
        for (int d = 1; d < G; d <<= 1) {
            const int t = __shfl_up_sync(mask, x, d, G);
            if (lane >= d)
                x += t;
        }
        total = __shfl_sync(mask, x, G - 1, G);
        return x - v;
    }
    __device__ __forceinline__ int ballot_scan(bool p, int &total) const
    {
        const unsigned b = __ballot_sync(mask, p);
        total = __popc(b);
        return __popc(b & ((1u << (threadIdx.x & 31)) - 1u));
    }
    __device__ __forceinline__ int min(int v) const
    {
#pragma unroll
        for (int o = G / 2; o > 0; o >>= 1)
            v = ::min(v, __shfl_xor_sync(mask, v, o, G));
        return v;
    }
    __device__ __forceinline__ int max(int v) const
    {
#pragma unroll
        for (int o = G / 2; o > 0; o >>= 1)
            v = ::max(v, __shfl_xor_sync(mask, v, o, G));
        return v;
    }
};

// Scratch of a CTA team in shared memory: T/32 + 1 partial sums plus the staging arrays
// of the product enumeration (T entries each).
template <int T>
struct SgCtaScratch {
    long long part[T / 32 + 1];
    sd_offset bs[T];
    int excl[T];
    float av[T];
};

template <int T>
struct SgCta {
    static constexpr int size = T;
    int lane;
    SgCtaScratch<T> *s;
    __device__ __forceinline__ SgCta(SgCtaScratch<T> *scratch) : lane((int)threadIdx.x), s(scratch) {}
    __device__ __forceinline__ void sync() const { __syncthreads(); }
    // Exclusive prefix over the CTA (64-bit); every thread gets the total. Ends with a
    // barrier, so the scratch can be reused at once.
    __device__ __forceinline__ long long excl_scan64(long long v, long long &total) const
    {
        const int l = lane & 31, w = lane >> 5;
        long long x = v;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const long long t = __shfl_up_sync(SD_FULL_MASK, x, d);
            if (l >= d)
                x += t;
        }
        if (l == 31)
            s->part[w] = x;
        __syncthreads();
        if (w == 0) {
            long long p = l < T / 32 ? s->part[l] : 0;
#pragma unroll
            for (int d = 1; d < 32; d <<= 1) {
                const long long t = __shfl_up_sync(SD_FULL_MASK, p, d);
                if (l >= d)
                    p += t;
            }
            if (l < T / 32)
                s->part[l] = p; // inclusive over warps
            if (l == 31)
                s->part[T / 32] = p;
        }
        __syncthreads();
        const long long before = w > 0 ? s->part[w - 1] : 0;
        total = s->part[T / 32];
        __syncthreads();
        return before + x - v;
    }
    __device__ __forceinline__ int excl_scan(int v, int &total) const
    {
        long long t64;
        const long long r = excl_scan64(v, t64);
        total = (int)t64;
        return (int)r;
    }
    __device__ __forceinline__ int ballot_scan(bool p, int &total) const
    {
        return excl_scan(p ? 1 : 0, total);
    }
    __device__ __forceinline__ int sum(int v) const
    {
        int total;
        (void)excl_scan(v, total);
        return total;
    }
    // Minimum / maximum over the CTA (every thread gets it; ends with a barrier).
    template <bool MAX>
    __device__ __forceinline__ int extreme(int v) const
    {
        const int l = lane & 31, w = lane >> 5;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const int t = __shfl_xor_sync(SD_FULL_MASK, v, o);
            v = MAX ? ::max(v, t) : ::min(v, t);
        }
        if (l == 0)
            s->part[w] = v;
        __syncthreads();
        int r = (int)s->part[0];
        for (int q = 1; q < T / 32; q++)
            r = MAX ? ::max(r, (int)s->part[q]) : ::min(r, (int)s->part[q]);
        __syncthreads();
        return r;
    }
    __device__ __forceinline__ int min(int v) const { return extreme<false>(v); }
    __device__ __forceinline__ int max(int v) const { return extreme<true>(v); }
};

// ------------------------------------------------------------------ product enumeration
// Calls f(col, val) once for every product of row `row` of A·B whose number (in the
// row's order: A entries in turn, each B row in order) lies in [pbeg, pend). A team
// takes G entries of A at a time; their products are numbered 0 … total−1 and dealt to
// the lanes in turn, so lanes stay busy whatever the B row lengths (a lane finds the A
// entry of its product by a binary search over the team's prefix of lengths; a CTA whose
// round has long B rows instead gives each warp whole B rows, see SG_WARP_BROW). Each lane
// loads SG_ILP products before it accumulates them: the loads overlap (the product loop
// is latency-bound). Products per round of entries must stay below 2^31 (the plan
// checks B's rows).
#define SG_ILP 4
#define SG_ALL_PRODUCTS 0x7fffffffffffffffll
// A CTA's round of entries (at least T/8 of them) whose B rows average at least this many
// products switches to a warp per B row (below: lanes would idle at the ends of short rows).
// 0 turns it off (a unit generated under SPARSEDITTO_SG_WARP_BROW=0 defines it so).
#ifndef SG_WARP_BROW
#define SG_WARP_BROW 32
#endif

template <bool VALS, int G, typename F>
static __device__ __forceinline__ void sg_products(const SgGroup<G> &tm, const sd_spgemm_args &a,
                                                   int row, F &&f)
{
    const sd_offset a0 = a.arow[row], a1 = a.arow[row + 1];
    for (sd_offset base = a0; base < a1; base += G) {
        const sd_offset idx = base + tm.lane;
        sd_offset bs = 0;
        int len = 0;
        float av = 0.f;
        if (idx < a1) {
            const int k = __ldg(a.acol + idx);
            bs = __ldg(a.brow + k);
            len = (int)(__ldg(a.brow + k + 1) - bs);
            if (VALS)
                av = __ldg(a.aval + idx);
        }
        int total;
        const int excl = tm.excl_scan(len, total);
        for (int t0 = 0; t0 < total; t0 += G * SG_ILP) {
            int col[SG_ILP];
            float val[SG_ILP];
#pragma unroll
            for (int q = 0; q < SG_ILP; q++) {
                col[q] = -1;
                val[q] = 0.f;
            }
#pragma unroll
            for (int q = 0; q < SG_ILP; q++) {
                if (t0 + q * G >= total) // uniform over the group: no lane has a product
                    break;
                const int t = t0 + q * G + tm.lane;
                // The owner of product t: the last lane j with excl_j ≤ t (its length is > 0).
                int j = 0;
#pragma unroll
                for (int s = G / 2; s > 0; s >>= 1) {
                    const int e = __shfl_sync(tm.mask, excl, j + s, G);
                    if (e <= t)
                        j += s;
                }
                const int ej = __shfl_sync(tm.mask, excl, j, G);
                const sd_offset bsj = __shfl_sync(tm.mask, bs, j, G);
                float avj = 0.f;
                if (VALS)
                    avj = __shfl_sync(tm.mask, av, j, G);
                if (t < total) {
                    const sd_offset p = bsj + (t - ej);
                    col[q] = __ldg(a.bcol + p);
                    if (VALS)
                        val[q] = avj * sg_bval(a, p);
                }
            }
#pragma unroll
            for (int q = 0; q < SG_ILP; q++)
                if (col[q] >= 0)
                    f(col[q], val[q]);
        }
    }
}

template <bool VALS, int T, typename F>
static __device__ __forceinline__ void sg_products(const SgCta<T> &tm, const sd_spgemm_args &a,
                                                   int row, F &&f,
                                                   long long pbeg = 0,
                                                   long long pend = SG_ALL_PRODUCTS)
{
    const sd_offset a0 = a.arow[row], a1 = a.arow[row + 1];
    long long before = 0; // products of the earlier rounds
    for (sd_offset base = a0; base < a1 && before < pend; base += T) {
        const sd_offset idx = base + tm.lane;
        sd_offset bs = 0;
        int len = 0;
        float av = 0.f;
        if (idx < a1) {
            const int k = __ldg(a.acol + idx);
            bs = __ldg(a.brow + k);
            len = (int)(__ldg(a.brow + k + 1) - bs);
            if (VALS)
                av = __ldg(a.aval + idx);
        }
        int total;
        const int excl = tm.excl_scan(len, total); // ends with a barrier
        const int nact = a1 - base < T ? (int)(a1 - base) : T; // entries in this round
        // (uniform conditions: tm.max's barriers are reached by every thread or none; the
        // longest B row at most a warp's share of the round, so one hub row cannot hold
        // the round back while the other warps wait)
        if (SG_WARP_BROW > 0 && pbeg == 0 && pend == SG_ALL_PRODUCTS && nact >= T / 8 &&
            total >= SG_WARP_BROW * nact && (long long)tm.max(len) * (T / 32) <= total) {
            // Long B rows (≥ SG_WARP_BROW products per entry on average; the same in every
            // thread): the round's entries are dealt to the warps in turn and all 32 lanes
            // walk one B row at a time, coalesced and without the binary search (8–9
            // dependent shared-memory loads per product at T = 256–512).
            tm.s->excl[tm.lane] = excl;
            tm.s->bs[tm.lane] = bs;
            tm.s->av[tm.lane] = av;
            __syncthreads();
            const int wl = tm.lane & 31;
            for (int e = tm.lane >> 5; e < nact; e += T / 32) {
                const sd_offset bsj = tm.s->bs[e];
                const int lenj = (e + 1 < T ? tm.s->excl[e + 1] : total) - tm.s->excl[e];
                const float avj = VALS ? tm.s->av[e] : 0.f;
                for (int t0 = 0; t0 < lenj; t0 += 32 * SG_ILP) {
                    int col[SG_ILP];
                    float val[SG_ILP];
#pragma unroll
                    for (int q = 0; q < SG_ILP; q++) {
                        const int t = t0 + q * 32 + wl;
                        col[q] = -1;
                        val[q] = 0.f;
                        if (t < lenj) {
                            col[q] = __ldg(a.bcol + bsj + t);
                            if (VALS)
                                val[q] = avj * sg_bval(a, bsj + t);
                        }
                    }
#pragma unroll
                    for (int q = 0; q < SG_ILP; q++)
                        if (col[q] >= 0)
                            f(col[q], val[q]);
                }
            }
            __syncthreads(); // the scratch is rewritten by the next round
            before += total;
            continue;
        }
        if (before + total > pbeg) {
            tm.s->excl[tm.lane] = excl;
            tm.s->bs[tm.lane] = bs;
            tm.s->av[tm.lane] = av;
            __syncthreads();
            const int tlo = pbeg > before ? (int)(pbeg - before) : 0;
            const int thi = pend - before < total ? (int)(pend - before) : total;
            for (int t0 = tlo; t0 < thi; t0 += T * SG_ILP) {
                int col[SG_ILP];
                float val[SG_ILP];
#pragma unroll
                for (int q = 0; q < SG_ILP; q++) {
                    col[q] = -1;
                    val[q] = 0.f;
                    const int t = t0 + q * T + tm.lane;
                    if (t < thi) {
                        int j = 0;
#pragma unroll
                        for (int s = T / 2; s > 0; s >>= 1)
                            if (tm.s->excl[j + s] <= t)
                                j += s;
                        const sd_offset p = tm.s->bs[j] + (t - tm.s->excl[j]);
                        col[q] = __ldg(a.bcol + p);
                        if (VALS)
                            val[q] = tm.s->av[j] * sg_bval(a, p);
                    }
                }
#pragma unroll
                for (int q = 0; q < SG_ILP; q++)
                    if (col[q] >= 0)
                        f(col[q], val[q]);
            }
            __syncthreads();
        }
        before += total;
    }
}

// ------------------------------------------------------------------ ordering

// Moves the occupied slots of keys/vals[0, cap) to the front, in slot order; returns
// their number. In place: a round reads its slots before anyone writes, and writes go
// only to slots at or before the writer's own.
template <bool VALS, class Team>
static __device__ __forceinline__ int sg_compact(const Team &tm, int *keys, float *vals, int cap)
{
    int w = 0;
    for (int base = 0; base < cap; base += Team::size) {
        const int s = base + tm.lane;
        int k = SD_SG_EMPTY;
        float v = 0.f;
        if (s < cap) {
            k = keys[s];
            if (VALS)
                v = vals[s];
        }
        const bool occ = k != SD_SG_EMPTY;
        int tot;
        const int pre = tm.ballot_scan(occ, tot);
        tm.sync();
        if (occ) {
            keys[w + pre] = k;
            if (VALS)
                vals[w + pre] = v;
        }
        w += tot;
        tm.sync();
    }
    return w;
}

// Bitonic sort of keys/vals[0, n2), n2 a power of two (unique keys, padding EMPTY).
template <bool VALS, class Team>
static __device__ __forceinline__ void sg_bitonic(const Team &tm, int *keys, float *vals, int n2)
{
    for (int k = 2; k <= n2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int t = tm.lane; t < (n2 >> 1); t += Team::size) {
                const int i = 2 * t - (t & (j - 1));
                const int l = i + j;
                const int ki = keys[i], kl = keys[l];
                const bool up = (i & k) == 0;
                if ((ki > kl) == up) {
                    keys[i] = kl;
                    keys[l] = ki;
                    if (VALS) {
                        const float vi = vals[i];
                        vals[i] = vals[l];
                        vals[l] = vi;
                    }
                }
            }
            tm.sync();
        }
    }
}

// One pass of the rank write: the keys first·size + lane (one a lane) are ranked against
// all n compacted keys, read two at a time (a table starts at least 8-byte aligned: a
// group's at g·2^LCAP ints, a CTA's after SgCtaScratch), and written with their values to
// their ranks. A row of n keys takes ⌈n / size⌉ passes, so a short row pays one compare a
// key; a fixed-width write would make every row pay 4 or 8 (R/2 or R registers a lane), and
// its two instantiations cost more NVRTC time than this single pass in a loop.
template <class Team>
static __device__ __forceinline__ void sg_rank_pass(const Team &tm, const int *keys,
                                                    const float *vals, int n, int first,
                                                    sd_index *dcol, sd_value *dval)
{
    const int s = tm.lane + first * Team::size;
    const int my = s < n ? keys[s] : SD_SG_EMPTY;
    // k < my as the sign bit of k − my (keys and my lie in [0, 2^31 − 1]: no overflow), added
    // with one shift-add; two counts, so that the adds of a pair do not wait on each other.
    unsigned r0 = 0u, r1 = 0u;
    const int n2 = n & ~1;
    for (int q = 0; q < n2; q += 2) {
        const int2 k = *(const int2 *)(keys + q);
        r0 += (unsigned)(k.x - my) >> 31;
        r1 += (unsigned)(k.y - my) >> 31;
    }
    if (n2 < n)
        r0 += (unsigned)(keys[n2] - my) >> 31;
    const int rk = (int)(r0 + r1);
    if (s < n) {
        dcol[rk] = my;
        dval[rk] = vals[s];
    }
}

// Writes the n compacted entries of keys/vals[0, n) in column order to dcol/dval[0, n).
// Up to 8 keys a lane (4 a thread in a CTA): by rank, a pass per key a lane
// (sg_rank_pass). When the table (cap slots, a power of two) is at most half full and the
// keys span at most 16·cap columns: by an occupancy bitmap of the span in the free upper
// halves of keys and vals, whose popcount prefix gives every key its rank in
// O(n + span/32). Otherwise: bitonic sort.
template <class Team>
static __device__ __forceinline__ void sg_write_sorted(const Team &tm, int *keys, float *vals,
                                                       int n, int cap, sd_index *dcol,
                                                       sd_value *dval)
{
    constexpr int R = Team::size <= 32 ? 8 : 4;
    if (n <= R * Team::size) {
        const int passes = (n + Team::size - 1) / Team::size; // keys a lane, ≤ R
        for (int p = 0; p < passes; p++)
            sg_rank_pass(tm, keys, vals, n, p, dcol, dval);
        tm.sync();
        return;
    }
    if (2 * n <= cap) {
        int lo = SD_SG_EMPTY, hi = -1;
        for (int s = tm.lane; s < n; s += Team::size) {
            lo = min(lo, keys[s]);
            hi = max(hi, keys[s]);
        }
        lo = tm.min(lo);
        hi = tm.max(hi);
        const long long words = ((long long)hi - lo + 1 + 31) / 32;
        if (words <= cap / 2) {
            const int nw = (int)words;
            unsigned *bits = (unsigned *)(keys + cap / 2);
            int *pre = (int *)(vals + cap / 2);
            for (int w = tm.lane; w < nw; w += Team::size)
                bits[w] = 0u;
            tm.sync();
            for (int s = tm.lane; s < n; s += Team::size) {
                const int x = keys[s] - lo;
                atomicOr(bits + (x >> 5), 1u << (x & 31));
            }
            tm.sync();
            int done = 0;
            for (int base = 0; base < nw; base += Team::size) {
                const int w = base + tm.lane;
                const int c = w < nw ? __popc(bits[w]) : 0;
                int tot;
                const int e = tm.excl_scan(c, tot);
                if (w < nw)
                    pre[w] = done + e;
                done += tot;
            }
            tm.sync();
            for (int s = tm.lane; s < n; s += Team::size) {
                const int k = keys[s], x = k - lo;
                const int r = pre[x >> 5] + __popc(bits[x >> 5] & ((1u << (x & 31)) - 1u));
                dcol[r] = k;
                dval[r] = vals[s];
            }
            tm.sync();
            return;
        }
    }
    int n2 = 1;
    while (n2 < n)
        n2 <<= 1;
    for (int s = n + tm.lane; s < n2; s += Team::size)
        keys[s] = SD_SG_EMPTY;
    tm.sync();
    sg_bitonic<true>(tm, keys, vals, n2);
    for (int s = tm.lane; s < n; s += Team::size) {
        dcol[s] = keys[s];
        dval[s] = vals[s];
    }
    tm.sync();
}

// Destination of a row's sorted output: C at crow[row] (NUM) or the staging area at
// ub[row] (ONE).
template <int PH>
static __device__ __forceinline__ void sg_dest(const sd_spgemm_args &a, int row, sd_index *&dc,
                                               sd_value *&dv)
{
    if (PH == SD_SG_PH_NUM) {
        const sd_offset o = a.crow[row];
        dc = a.ccol + o;
        dv = a.cval + o;
    } else {
        const sd_offset o = a.ub[row];
        dc = a.tcol + o;
        dv = a.tval + o;
    }
}

#endif // SD_SPGEMM_TEAM_CUH
