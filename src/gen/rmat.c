/* src/gen/rmat.c: R-MAT graphs (Chakrabarti, Zhan & Faloutsos 2004): each edge descends
 * scale levels of the adjacency matrix choosing a quadrant with probabilities a, b, c,
 * d = 1 − a − b − c; duplicates merged; optionally symmetric. */
#include <math.h>

#include "gen.h"

#define RMAT_CHUNK 65536 /* edges per random stream: thread-count independent */

sd_status sdi_gen_rmat(const sdi_gen_params *p, sd_csr *out)
{
    int64_t scale, sym;
    double ef, a, b, c;
    sd_status s = sdi_gen_int(p, "scale", 12, 0, 30, &scale);
    if (s == SD_OK)
        s = sdi_gen_real(p, "ef", 16, 0, 1e6, &ef);
    if (s == SD_OK)
        s = sdi_gen_real(p, "a", 0.57, 0, 1, &a);
    if (s == SD_OK)
        s = sdi_gen_real(p, "b", 0.19, 0, 1, &b);
    if (s == SD_OK)
        s = sdi_gen_real(p, "c", 0.19, 0, 1, &c);
    if (s == SD_OK)
        s = sdi_gen_int(p, "sym", 0, 0, 1, &sym);
    if (s != SD_OK)
        return s;
    if (a + b + c > 1.0 + 1e-12)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "gen: rmat: keys 'a', 'b', 'c' sum to %g > 1 (d = 1 - a - b - c)",
                       a + b + c);
    const int64_t n = (int64_t)1 << scale;
    const double edges_d = ef * (double)n;
    if (edges_d * (sym ? 2.0 : 1.0) > 4e10)
        return SDI_ERR(SD_ERR_INVALID_ARG, "gen: rmat: %.3g edges is too many", edges_d);
    if (p->check_only)
        return SD_OK;
    const int64_t edges = llround(edges_d), total = sym ? 2 * edges : edges;
    int32_t *ri = sdi_malloc_array((size_t)total, sizeof *ri);
    int32_t *ci = sdi_malloc_array((size_t)total, sizeof *ci);
    if (ri == NULL || ci == NULL) {
        sdi_free(ri);
        sdi_free(ci);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "gen: rmat: out of host memory for %lld edges",
                       (long long)total);
    }
    /* Quadrant thresholds on 32-bit uniforms (two per 64-bit draw). */
    const double two32 = 4294967296.0;
    const uint64_t ta = (uint64_t)(a * two32), tab = (uint64_t)((a + b) * two32),
                   tabc = (uint64_t)((a + b + c) * two32);
    const int64_t nchunks = (edges + RMAT_CHUNK - 1) / RMAT_CHUNK;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t ch = 0; ch < nchunks; ch++) {
        sdi_rng r;
        sdi_rng_seed(&r, p->seed, SDI_STREAM_EDGES, (uint64_t)ch);
        int64_t e_end = (ch + 1) * RMAT_CHUNK < edges ? (ch + 1) * RMAT_CHUNK : edges;
        uint64_t bits = 0;
        int have = 0;
        for (int64_t e = ch * RMAT_CHUNK; e < e_end; e++) {
            uint32_t row = 0, col = 0;
            for (int64_t lvl = scale - 1; lvl >= 0; lvl--) {
                if (have == 0) {
                    bits = sdi_rng_next(&r);
                    have = 2;
                }
                uint64_t u = bits & 0xffffffffu;
                bits >>= 32;
                have--;
                if (u < ta) {
                } else if (u < tab) {
                    col |= 1u << lvl;
                } else if (u < tabc) {
                    row |= 1u << lvl;
                } else {
                    row |= 1u << lvl;
                    col |= 1u << lvl;
                }
            }
            ri[e] = (int32_t)row;
            ci[e] = (int32_t)col;
            if (sym) {
                ri[edges + e] = (int32_t)col;
                ci[edges + e] = (int32_t)row;
            }
        }
    }
    return sdi_gen_from_edges((int32_t)n, (int32_t)n, total, &ri, &ci, out);
}
