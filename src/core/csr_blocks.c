/* src/core/csr_blocks.c: the block census of a 16-row block row: occupied b×b blocks for
 * b = 2, 4, 8 and 16 and the dense 16×16 tiles, from one merge of the block row's sorted
 * rows in column order. It visits each entry once with no per-column state, so it costs
 * O(nnz · log 16) and stays cache-friendly whatever the column spread; the analysis (the
 * ρ_BSR features) and SpMV synthesis (its block statistics) both count blocks with it. */
#include "core.h"

/* The heap merging up to 16 sorted rows: key = column << 4 | the row's place in the block
 * row, so equal columns come out in row order. */
#define HEAP_EMPTY UINT64_MAX /* a finished row; sorts after every key */
#define HEAP_SLOTS 32         /* a complete tree over 16 rows */

static inline void heap_sift_down(uint64_t *h, int n, int i)
{
    uint64_t x = h[i];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] < h[c])
            c++;
        if (h[c] >= x)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* Fills h[0, n) into a heap and the slots past them with HEAP_EMPTY; returns the depth
 * d of the smallest complete tree holding the n keys (2^(d+1) − 1 ≥ n). n ≤ 16. */
static inline int heap_build(uint64_t *h, int n)
{
    int d = 0;
    while ((2 << d) - 1 < n)
        d++;
    for (int k = n; k < HEAP_SLOTS; k++)
        h[k] = HEAP_EMPTY;
    for (int k = n / 2 - 1; k >= 0; k--)
        heap_sift_down(h, n, k);
    return d;
}

/* Replaces the root of a complete heap of depth d (slots past the live keys hold
 * HEAP_EMPTY) by x and sifts it down without data-dependent branches: the merge's
 * comparisons are unpredictable, and a mispredicted branch per level cost more than the
 * whole level. Once x stops, i stops: the same comparison fails on every later level. */
static inline void heap_replace_top(uint64_t *h, int d, uint64_t x)
{
    int i = 0;
    for (int l = 0; l < d; l++) {
        int c = 2 * i + 1;
        uint64_t a = h[c], b = h[c + 1];
        int right = b < a;
        uint64_t m = right ? b : a;
        c += right;
        int move = m < x;
        h[i] = move ? m : h[i];
        i = move ? c : i;
    }
    h[i] = x;
}

/* Set bits of a 4-bit mask (the build may not have a popcount instruction). */
static const unsigned char k_bits4[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

void sdi_csr_block_census(const sd_csr *a, int64_t br, int64_t dense_min, sdi_block_census *out)
{
    const int64_t *rp = a->rowptr;
    const int32_t *ci = a->colind;
    const int64_t r0 = br * 16, r1 = a->rows - r0 < 16 ? a->rows : r0 + 16;
    uint64_t heap[HEAP_SLOTS];
    int64_t cur[16], end[16];
    int hn = 0;
    for (int64_t i = r0; i < r1; i++) {
        const int s = (int)(i - r0);
        cur[s] = rp[i];
        end[s] = rp[i + 1];
        if (cur[s] < end[s])
            heap[hn++] = ((uint64_t)(uint32_t)ci[cur[s]] << 4) | (uint64_t)s;
    }
    const int d = heap_build(heap, hn);
    /* The block of each size being filled (g), the rows' groups seen in it (m: bit k for
     * rows 2k … 2k + 1 at b = 2, and so on), and the entries of the current 16×16 tile. */
    int64_t g2 = -1, g4 = -1, g8 = -1, g16 = -1, cnt16 = 0;
    unsigned m2 = 0, m4 = 0, m8 = 0;
    sdi_block_census c = {{0}, 0, 0};
    while (heap[0] != HEAP_EMPTY) {
        const uint64_t key = heap[0];
        const int64_t j = (int64_t)(key >> 4);
        const int s = (int)(key & 15u);
        c.occ[0]++;
        if ((j >> 4) != g16) {
            if (cnt16 > 0) {
                c.occ[4]++;
                if (cnt16 >= dense_min) {
                    c.dense_tiles++;
                    c.dense_nnz += cnt16;
                }
            }
            g16 = j >> 4;
            cnt16 = 0;
        }
        cnt16++;
        if ((j >> 3) != g8) {
            c.occ[3] += k_bits4[m8];
            m8 = 0;
            g8 = j >> 3;
        }
        m8 |= 1u << (s >> 3);
        if ((j >> 2) != g4) {
            c.occ[2] += k_bits4[m4];
            m4 = 0;
            g4 = j >> 2;
        }
        m4 |= 1u << (s >> 2);
        if ((j >> 1) != g2) {
            c.occ[1] += k_bits4[m2 & 15u] + k_bits4[m2 >> 4];
            m2 = 0;
            g2 = j >> 1;
        }
        m2 |= 1u << (s >> 1);
        const uint64_t next = ++cur[s] < end[s] ? ((uint64_t)(uint32_t)ci[cur[s]] << 4) | (uint64_t)s
                                                : HEAP_EMPTY;
        heap_replace_top(heap, d, next);
    }
    if (cnt16 > 0) {
        c.occ[4]++;
        if (cnt16 >= dense_min) {
            c.dense_tiles++;
            c.dense_nnz += cnt16;
        }
    }
    c.occ[3] += k_bits4[m8];
    c.occ[2] += k_bits4[m4];
    c.occ[1] += k_bits4[m2 & 15u] + k_bits4[m2 >> 4];
    *out = c;
}
