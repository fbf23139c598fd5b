// src/kernels/spgemm_rows.cuh: the SpGEMM row accumulators, one per bin kind, each in
// three phases (SYM counts distinct columns, NUM writes sorted values into C, ONE does
// both into the upper-bound staging area), and the segment entry points that generated
// launches call by block range:
//   sg_seg_tiny<UT>        thread per row, sorted list of ≤ UT entries in registers
//   sg_seg_ghash<G, LCAP>  G lanes per row, shared-memory hash table of 2^LCAP slots
//   sg_seg_gdense<G, W>    G lanes per row, dense stripe of W columns from rowlo[row]
//   sg_seg_chash<LCAP>     CTA per row, shared-memory hash table of 2^LCAP slots
//   sg_seg_cdense<W>       CTA per row, dense stripe of W columns in shared memory
//   sg_seg_global          CTA per row, dense stripe in global memory (slot per CTA)
//   sg_seg_copy            compaction of one-phase rows from the staging area into C
// Explicit zeros: the structure is every reached column (hash keys, occupancy bits),
// whatever the values sum to.
#ifndef SD_SPGEMM_ROWS_CUH
#define SD_SPGEMM_ROWS_CUH

#include "spgemm_team.cuh"

// ------------------------------------------------------------------ tiny rows
// One thread per row (u ≤ UT products): the sorted list lives in registers; every
// access is unrolled with constant indices so nothing spills to local memory.
template <int UT, int PH, int T>
static __device__ __forceinline__ void sg_seg_tiny(const sd_spgemm_args &a, int seg, int lb,
                                                   unsigned char *smem)
{
    (void)smem;
    const int i = lb * T + (int)threadIdx.x;
    if (i >= a.seg_rows[seg])
        return;
    const int row = a.binrows[a.seg_first[seg] + i];
    constexpr bool VALS = PH != SD_SG_PH_SYM;
    int c[UT];
    float v[UT];
#pragma unroll
    for (int s = 0; s < UT; s++) {
        c[s] = SD_SG_EMPTY;
        v[s] = 0.f;
    }
    int n = 0;
    const sd_offset a0 = a.arow[row], a1 = a.arow[row + 1];
    for (sd_offset p = a0; p < a1; p++) {
        const int k = __ldg(a.acol + p);
        const float av = VALS ? __ldg(a.aval + p) : 0.f;
        const sd_offset b1 = __ldg(a.brow + k + 1);
        for (sd_offset q = __ldg(a.brow + k); q < b1; q++) {
            const int col = __ldg(a.bcol + q);
            const float x = VALS ? av * sg_bval(a, q) : 0.f;
            int pos = 0;
            bool found = false;
#pragma unroll
            for (int s = 0; s < UT; s++) {
                if (c[s] == col) {
                    if (VALS)
                        v[s] += x;
                    found = true;
                }
                pos += c[s] < col; // empty slots hold SD_SG_EMPTY: never below col
            }
            if (!found) {
#pragma unroll
                for (int s = UT - 1; s > 0; s--) {
                    if (s > pos) {
                        c[s] = c[s - 1];
                        if (VALS)
                            v[s] = v[s - 1];
                    }
                }
#pragma unroll
                for (int s = 0; s < UT; s++) {
                    if (s == pos) {
                        c[s] = col;
                        if (VALS)
                            v[s] = x;
                    }
                }
                n++;
            }
        }
    }
    if (PH == SD_SG_PH_SYM) {
        a.cnt[row] = n;
        return;
    }
    sd_index *dc;
    sd_value *dv;
    sg_dest<PH>(a, row, dc, dv);
#pragma unroll
    for (int s = 0; s < UT; s++) {
        if (s < n) {
            dc[s] = c[s];
            dv[s] = v[s];
        }
    }
    if (PH == SD_SG_PH_ONE)
        a.cnt[row] = n;
}

// ------------------------------------------------------------------ hash tables

// Inserts col (and adds v): linear probing from the hash, keys claimed by CAS. Returns
// 1 when this call claimed a new slot.
template <bool VALS, int LCAP>
static __device__ __forceinline__ int sg_hash_insert(int *keys, float *vals, int col, float v)
{
    constexpr unsigned MASK = (1u << LCAP) - 1u;
    unsigned h = sg_hash<LCAP>(col);
    int claimed = 0;
    for (;;) {
        const int k = ((volatile int *)keys)[h];
        if (k == col)
            break;
        if (k == SD_SG_EMPTY) {
            const int old = atomicCAS(keys + h, SD_SG_EMPTY, col);
            if (old == SD_SG_EMPTY) {
                claimed = 1;
                break;
            }
            if (old == col)
                break;
        }
        h = (h + 1u) & MASK;
    }
    if (VALS)
        atomicAdd(vals + h, v);
    return claimed;
}

// One row through a team's hash table of 2^LCAP slots (keys, and vals unless SYM).
template <int PH, int LCAP, class Team>
static __device__ __forceinline__ void sg_hash_row(const Team &tm, const sd_spgemm_args &a, int row,
                                                   int *keys, float *vals)
{
    constexpr int CAP = 1 << LCAP;
    constexpr bool VALS = PH != SD_SG_PH_SYM;
    for (int s = tm.lane; s < CAP; s += Team::size) {
        keys[s] = SD_SG_EMPTY;
        if (VALS)
            vals[s] = 0.f;
    }
    tm.sync();
    int mine = 0;
    sg_products<VALS>(tm, a, row, [&](int col, float v) {
        mine += sg_hash_insert<VALS, LCAP>(keys, vals, col, v);
    });
    tm.sync();
    if (PH == SD_SG_PH_SYM) {
        const int n = tm.sum(mine);
        if (tm.lane == 0)
            a.cnt[row] = n;
        return;
    }
    const int n = sg_compact<true>(tm, keys, vals, CAP);
    sd_index *dc;
    sd_value *dv;
    sg_dest<PH>(a, row, dc, dv);
    sg_write_sorted(tm, keys, vals, n, CAP, dc, dv);
    if (PH == SD_SG_PH_ONE && tm.lane == 0)
        a.cnt[row] = n;
}

// Bytes of shared memory one hash table needs in a phase.
#define SG_HASH_BYTES(LCAP, PH) ((PH) == SD_SG_PH_SYM ? (4 << (LCAP)) : (8 << (LCAP)))

template <int G, int LCAP, int PH, int T>
static __device__ __forceinline__ void sg_seg_ghash(const sd_spgemm_args &a, int seg, int lb,
                                                    unsigned char *smem)
{
    constexpr int GPC = T / G; // groups per CTA
    constexpr int CAP = 1 << LCAP;
    const int g = (int)threadIdx.x / G;
    const int i = lb * GPC + g;
    if (i >= a.seg_rows[seg])
        return; // the whole group leaves together: groups never wait for each other
    const SgGroup<G> tm;
    int *keys = (int *)smem + (size_t)g * CAP;
    float *vals = (float *)(smem + (size_t)GPC * CAP * 4) + (size_t)g * CAP;
    sg_hash_row<PH, LCAP>(tm, a, a.binrows[a.seg_first[seg] + i], keys, vals);
}

template <int LCAP, int PH, int T>
static __device__ __forceinline__ void sg_seg_chash(const sd_spgemm_args &a, int seg, int lb,
                                                    unsigned char *smem)
{
    constexpr int CAP = 1 << LCAP;
    SgCtaScratch<T> *scr = (SgCtaScratch<T> *)smem;
    const SgCta<T> tm(scr);
    int *keys = (int *)(smem + sizeof(SgCtaScratch<T>));
    float *vals = (float *)(smem + sizeof(SgCtaScratch<T>) + (size_t)CAP * 4);
    sg_hash_row<PH, LCAP>(tm, a, a.binrows[a.seg_first[seg] + lb], keys, vals);
}

// ------------------------------------------------------------------ dense stripes
// Columns [lo, lo + W) with lo = rowlo[row] (the plan guarantees the row's span fits):
// values in a dense array, occupancy in a bitmap whose scan yields sorted columns.

template <int PH, int W, class Team>
static __device__ __forceinline__ void sg_dense_row(const Team &tm, const sd_spgemm_args &a, int row,
                                                    float *vals, unsigned *bits)
{
    constexpr int NW = W / 32;
    constexpr bool VALS = PH != SD_SG_PH_SYM;
    for (int s = tm.lane; s < NW; s += Team::size)
        bits[s] = 0u;
    if (VALS)
        for (int s = tm.lane; s < W; s += Team::size)
            vals[s] = 0.f;
    tm.sync();
    const int lo = a.rowlo[row];
    sg_products<VALS>(tm, a, row, [&](int col, float v) {
        const int x = col - lo;
        const unsigned bit = 1u << (x & 31);
        if (VALS)
            atomicAdd(vals + x, v);
        if ((((volatile unsigned *)bits)[x >> 5] & bit) == 0u)
            atomicOr(bits + (x >> 5), bit);
    });
    tm.sync();
    if (PH == SD_SG_PH_SYM) {
        int c = 0;
        for (int s = tm.lane; s < NW; s += Team::size)
            c += __popc(bits[s]);
        const int n = tm.sum(c);
        if (tm.lane == 0)
            a.cnt[row] = n;
        return;
    }
    sd_index *dc;
    sd_value *dv;
    sg_dest<PH>(a, row, dc, dv);
    int done = 0;
    for (int base = 0; base < NW; base += Team::size) {
        const int w = base + tm.lane;
        unsigned word = w < NW ? bits[w] : 0u;
        int tot;
        int pos = done + tm.excl_scan(__popc(word), tot);
        while (word != 0u) {
            const int b = __ffs(word) - 1;
            word &= word - 1u;
            dc[pos] = lo + w * 32 + b;
            dv[pos] = vals[w * 32 + b];
            pos++;
        }
        done += tot;
    }
    if (PH == SD_SG_PH_ONE && tm.lane == 0)
        a.cnt[row] = done;
}

#define SG_DENSE_BYTES(W, PH) ((PH) == SD_SG_PH_SYM ? (W) / 8 : (W) * 4 + (W) / 8)

template <int G, int W, int PH, int T>
static __device__ __forceinline__ void sg_seg_gdense(const sd_spgemm_args &a, int seg, int lb,
                                                     unsigned char *smem)
{
    constexpr int GPC = T / G;
    const int g = (int)threadIdx.x / G;
    const int i = lb * GPC + g;
    if (i >= a.seg_rows[seg])
        return;
    const SgGroup<G> tm;
    unsigned *bits = (unsigned *)smem + (size_t)g * (W / 32);
    float *vals = (float *)(smem + (size_t)GPC * (W / 8)) + (size_t)g * W;
    sg_dense_row<PH, W>(tm, a, a.binrows[a.seg_first[seg] + i], vals, bits);
}

template <int W, int PH, int T>
static __device__ __forceinline__ void sg_seg_cdense(const sd_spgemm_args &a, int seg, int lb,
                                                     unsigned char *smem)
{
    SgCtaScratch<T> *scr = (SgCtaScratch<T> *)smem;
    const SgCta<T> tm(scr);
    unsigned *bits = (unsigned *)(smem + sizeof(SgCtaScratch<T>));
    float *vals = (float *)(smem + sizeof(SgCtaScratch<T>) + W / 8);
    sg_dense_row<PH, W>(tm, a, a.binrows[a.seg_first[seg] + lb], vals, bits);
}

// ------------------------------------------------------------------ global stripes
// The largest rows: dense stripes of gwidth columns in global memory, zero between rows.
// Parts mode (gparts > 0, a stripe per row): gparts CTAs share a row, each taking an
// equal window of its products; the last to finish (a counter per row, after a fence)
// writes the row out and clears the stripe. Waves mode (gparts = 0): the segment's
// blocks are the slots, each walks the segment's rows with a stride of the slot count.
// The stripe is filled by atomics at L2, so it is read back through L2 (__ldcg,
// atomicExch), never through L1.
template <int PH, int T>
static __device__ __forceinline__ void sg_global_accumulate(const SgCta<T> &tm,
                                                            const sd_spgemm_args &a, int row,
                                                            int lo, float *gv, unsigned *gb,
                                                            long long pbeg, long long pend)
{
    constexpr bool VALS = PH != SD_SG_PH_SYM;
    sg_products<VALS>(tm, a, row, [&](int col, float v) {
        const long long x = (long long)(col - lo);
        if (VALS)
            atomicAdd(gv + x, v);
        atomicOr(gb + (x >> 5), 1u << (x & 31)); // no value used: a fire-and-forget RED
    }, pbeg, pend);
}

template <int PH, int T>
static __device__ __forceinline__ void sg_global_emit(const SgCta<T> &tm, const sd_spgemm_args &a,
                                                      int row, int lo, float *gv, unsigned *gb)
{
    const long long nw = a.gwidth / 32;
    if (PH == SD_SG_PH_SYM) {
        int c = 0;
        for (long long w = tm.lane; w < nw; w += T)
            c += __popc(atomicExch(gb + w, 0u));
        const int n = tm.sum(c);
        if (tm.lane == 0)
            a.cnt[row] = n;
        return;
    }
    sd_index *dc;
    sd_value *dv;
    sg_dest<PH>(a, row, dc, dv);
    long long done = 0;
    for (long long base = 0; base < nw; base += T) {
        const long long w = base + tm.lane;
        unsigned word = w < nw ? atomicExch(gb + w, 0u) : 0u;
        long long tot;
        long long pos = done + tm.excl_scan64(__popc(word), tot);
        while (word != 0u) {
            const int b = __ffs(word) - 1;
            word &= word - 1u;
            const long long x = w * 32 + b;
            dc[pos] = lo + (int)x;
            dv[pos] = __ldcg(gv + x);
            __stcg(gv + x, 0.f);
            pos++;
        }
        done += tot;
    }
    if (PH == SD_SG_PH_ONE && tm.lane == 0)
        a.cnt[row] = (int)done;
}

template <int PH, int T>
static __device__ __forceinline__ void sg_seg_global(const sd_spgemm_args &a, int seg, int lb,
                                                     unsigned char *smem)
{
    SgCtaScratch<T> *scr = (SgCtaScratch<T> *)smem;
    const SgCta<T> tm(scr);
    const long long nw = a.gwidth / 32;
    if (a.gparts > 0) {
        const int i = lb / a.gparts, part = lb % a.gparts;
        const int row = a.binrows[a.seg_first[seg] + i];
        const int lo = a.rowlo[row];
        float *gv = a.gval + (size_t)i * (size_t)a.gwidth;
        unsigned *gb = a.gbits + (size_t)i * (size_t)nw;
        // u(row), then this CTA's window of it
        long long u = 0;
        for (sd_offset p = a.arow[row] + tm.lane; p < a.arow[row + 1]; p += T) {
            const int k = __ldg(a.acol + p);
            u += __ldg(a.brow + k + 1) - __ldg(a.brow + k);
        }
        long long utot;
        (void)tm.excl_scan64(u, utot);
        const long long per = (utot + a.gparts - 1) / a.gparts;
        const long long pbeg = per * part, pend = pbeg + per < utot ? pbeg + per : utot;
        if (pbeg < pend)
            sg_global_accumulate<PH, T>(tm, a, row, lo, gv, gb, pbeg, pend);
        __threadfence();
        __syncthreads();
        if (tm.lane == 0)
            scr->part[0] = atomicAdd(a.gdone + i, 1) == a.gparts - 1;
        __syncthreads();
        const bool last = scr->part[0] != 0;
        __syncthreads();
        if (!last)
            return;
        __threadfence();
        sg_global_emit<PH, T>(tm, a, row, lo, gv, gb);
        if (tm.lane == 0)
            a.gdone[i] = 0;
        return;
    }
    const int nslots = a.seg_end[seg] - (seg > 0 ? a.seg_end[seg - 1] : 0);
    float *gv = a.gval + (size_t)lb * (size_t)a.gwidth;
    unsigned *gb = a.gbits + (size_t)lb * (size_t)nw;
    for (int i = lb; i < a.seg_rows[seg]; i += nslots) {
        const int row = a.binrows[a.seg_first[seg] + i];
        const int lo = a.rowlo[row];
        sg_global_accumulate<PH, T>(tm, a, row, lo, gv, gb, 0, SG_ALL_PRODUCTS);
        __syncthreads();
        sg_global_emit<PH, T>(tm, a, row, lo, gv, gb);
        __syncthreads();
    }
}

// ------------------------------------------------------------------ compaction
// Copies the one-phase rows of scan tile `tile` (SD_SG_SCAN_TILE rows) from the staging
// area into C. crow_s (tile rows + 1) holds the tile's C row pointers. Lane groups of G
// lanes (4 … 32, the same for the whole CTA) take a row each: G covers the tile's mean row
// and grows to a warp when a row is far longer than the mean (one-phase rows are short:
// u ≤ one_phase_max_u), so no lane searches for its row. (A copy spread evenly over the
// CTA, each entry finding its row by a 10-step binary search in shared memory, is
// instruction-bound on 47-entry rows: a quarter of the product's time.)
template <int T>
struct SgCopyScratch {
    SgCtaScratch<T> cta;
    sd_offset crow[SD_SG_SCAN_TILE + 1];
    int fpre[SD_SG_SCAN_TILE + 1];
};

template <int T>
static __device__ __forceinline__ void sg_copy_tile(const sd_spgemm_args &a, int tile,
                                                    SgCopyScratch<T> *s, bool crow_ready)
{
    constexpr int ITEMS = SD_SG_SCAN_TILE / T;
    const SgCta<T> tm(&s->cta);
    const int r0 = tile * SD_SG_SCAN_TILE;
    const int nr = min(SD_SG_SCAN_TILE, a.m - r0);
    int f[ITEMS];
    int mine = 0, longest = 0;
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int j = (int)threadIdx.x * ITEMS + q;
        f[q] = 0;
        if (j < nr) {
            const int r = r0 + j;
            if (a.ub[r + 1] > a.ub[r])
                f[q] = a.cnt[r];
            if (!crow_ready)
                s->crow[j] = a.crow[r];
        }
        mine += f[q];
        longest = max(longest, f[q]);
    }
    int total;
    int run = tm.excl_scan(mine, total);
#pragma unroll
    for (int q = 0; q < ITEMS; q++) {
        const int j = (int)threadIdx.x * ITEMS + q;
        if (j < nr)
            s->fpre[j] = run;
        run += f[q];
    }
    if (threadIdx.x == 0)
        s->fpre[nr] = total;
    if (total == 0) // uniform: no one-phase row in the tile
        return;
    longest = tm.max(longest); // ends with a barrier: fpre is complete
    const int mean = (total + nr - 1) / nr;
    int lg = 2; // G = 4 lanes at least
    while (lg < 5 && (1 << lg) < mean)
        lg++;
    if (longest > (16 << lg))
        lg = 5;
    const int G = 1 << lg;
    const int gl = (int)threadIdx.x & (G - 1);
    for (int j = (int)threadIdx.x >> lg; j < nr; j += T >> lg) {
        const int len = s->fpre[j + 1] - s->fpre[j];
        if (len == 0)
            continue;
        const sd_offset src = a.ub[r0 + j];
        const sd_offset dst = s->crow[j];
        // Two entries a lane in flight: the loads of both are issued before the stores.
        for (int o = gl; o < len; o += 2 * G) {
            const bool two = o + G < len;
            const sd_index c0 = a.tcol[src + o];
            const sd_value v0 = a.tval[src + o];
            sd_index c1 = 0;
            sd_value v1 = 0.f;
            if (two) {
                c1 = a.tcol[src + o + G];
                v1 = a.tval[src + o + G];
            }
            a.ccol[dst + o] = c0;
            a.cval[dst + o] = v0;
            if (two) {
                a.ccol[dst + o + G] = c1;
                a.cval[dst + o + G] = v1;
            }
        }
    }
}

template <int T>
static __device__ __forceinline__ void sg_seg_copy(const sd_spgemm_args &a, int seg, int lb,
                                                   unsigned char *smem)
{
    (void)seg;
    sg_copy_tile<T>(a, lb, (SgCopyScratch<T> *)smem, false);
}

#endif // SD_SPGEMM_ROWS_CUH
