/* src/gen/stencil.c: structured families: 2-D 5-point and 3-D 7/27-point stencils,
 * symmetric banded matrices with a kept fraction, dense diagonal blocks. */
#include <math.h>

#include "gen.h"

/* ------------------------------------------------------------------ stencils
 * Grid point (x, y, z) is row (z·ny + y)·nx + x; the neighbours are visited in (dz, dy,
 * dx) order, which is increasing column order. The 5-point stencil is the 7-point one
 * on a single layer. */
typedef struct {
    int64_t nx, ny, nz;
    int full; /* 1: 27-point (every offset in {-1,0,1}^3), 0: 7-point (axis offsets) */
} stencil_ctx;

static int64_t stencil_len(const sdi_rowgen *g, int32_t i)
{
    const stencil_ctx *c = g->ctx;
    int64_t x = i % c->nx, y = (i / c->nx) % c->ny, z = i / (c->nx * c->ny);
    int64_t ax = (x > 0) + (x < c->nx - 1), ay = (y > 0) + (y < c->ny - 1),
            az = (z > 0) + (z < c->nz - 1);
    return c->full ? (1 + ax) * (1 + ay) * (1 + az) : 1 + ax + ay + az;
}

static void stencil_fill(const sdi_rowgen *g, int32_t i, int32_t *cols, int64_t len)
{
    const stencil_ctx *c = g->ctx;
    int64_t x = i % c->nx, y = (i / c->nx) % c->ny, z = i / (c->nx * c->ny);
    int64_t w = 0;
    for (int dz = -1; dz <= 1; dz++) {
        if (z + dz < 0 || z + dz >= c->nz)
            continue;
        for (int dy = -1; dy <= 1; dy++) {
            if (y + dy < 0 || y + dy >= c->ny)
                continue;
            for (int dx = -1; dx <= 1; dx++) {
                if (x + dx < 0 || x + dx >= c->nx)
                    continue;
                if (!c->full && (dx != 0) + (dy != 0) + (dz != 0) > 1)
                    continue;
                cols[w++] = (int32_t)(((z + dz) * c->ny + (y + dy)) * c->nx + (x + dx));
            }
        }
    }
    (void)len;
}

static sd_status stencil(const sdi_gen_params *p, int dims, int full, int64_t def_n,
                         sd_csr *out)
{
    int64_t n, nx, ny, nz = 1;
    sd_status s = sdi_gen_int(p, "n", def_n, 1, INT32_MAX, &n);
    if (s == SD_OK)
        s = sdi_gen_int(p, "nx", n, 1, INT32_MAX, &nx);
    if (s == SD_OK)
        s = sdi_gen_int(p, "ny", n, 1, INT32_MAX, &ny);
    if (s == SD_OK && dims == 3)
        s = sdi_gen_int(p, "nz", n, 1, INT32_MAX, &nz);
    if (s != SD_OK)
        return s;
    if ((double)nx * (double)ny * (double)nz > (double)INT32_MAX)
        return SDI_ERR(SD_ERR_INVALID_ARG,
                       "gen: %s: grid %lld x %lld x %lld has more than 2^31-1 points",
                       p->family, (long long)nx, (long long)ny, (long long)nz);
    if (p->check_only)
        return SD_OK;
    stencil_ctx c = {nx, ny, nz, full};
    sdi_rowgen g = {(int32_t)(nx * ny * nz), (int32_t)(nx * ny * nz), stencil_len,
                    stencil_fill, NULL, &c, p->seed};
    return sdi_gen_build(&g, out);
}

sd_status sdi_gen_stencil2d(const sdi_gen_params *p, sd_csr *out)
{
    return stencil(p, 2, 0, 64, out);
}
sd_status sdi_gen_stencil3d7(const sdi_gen_params *p, sd_csr *out)
{
    return stencil(p, 3, 0, 16, out);
}
sd_status sdi_gen_stencil3d27(const sdi_gen_params *p, sd_csr *out)
{
    return stencil(p, 3, 1, 16, out);
}

/* ------------------------------------------------------------------ banded
 * Entry (i, j) with |i − j| ≤ bw is kept when i = j, or when a hash of the unordered
 * pair {i, j} falls below fill: the pattern is symmetric. */
typedef struct {
    int64_t n, bw;
    uint64_t threshold; /* keep iff hash < threshold */
    int all;            /* fill = 1 */
} banded_ctx;

static int banded_keep(const sdi_rowgen *g, const banded_ctx *c, int64_t i, int64_t j)
{
    if (c->all || i == j)
        return 1;
    uint64_t lo = (uint64_t)(i < j ? i : j), hi = (uint64_t)(i < j ? j : i);
    return sdi_hash3(g->seed, SDI_STREAM_PAIRS, (lo << 32) | hi) < c->threshold;
}

static int64_t banded_len(const sdi_rowgen *g, int32_t i)
{
    const banded_ctx *c = g->ctx;
    int64_t lo = i - c->bw < 0 ? 0 : i - c->bw, hi = i + c->bw >= c->n ? c->n - 1 : i + c->bw;
    if (c->all)
        return hi - lo + 1;
    int64_t n = 0;
    for (int64_t j = lo; j <= hi; j++)
        n += banded_keep(g, c, i, j);
    return n;
}

static void banded_fill(const sdi_rowgen *g, int32_t i, int32_t *cols, int64_t len)
{
    const banded_ctx *c = g->ctx;
    int64_t lo = i - c->bw < 0 ? 0 : i - c->bw, hi = i + c->bw >= c->n ? c->n - 1 : i + c->bw;
    int64_t w = 0;
    for (int64_t j = lo; j <= hi; j++)
        if (banded_keep(g, c, i, j))
            cols[w++] = (int32_t)j;
    (void)len;
}

sd_status sdi_gen_banded(const sdi_gen_params *p, sd_csr *out)
{
    int64_t n, bw;
    double fill;
    sd_status s = sdi_gen_int(p, "n", 1024, 1, INT32_MAX, &n);
    if (s == SD_OK)
        s = sdi_gen_int(p, "bw", n > 4 ? 4 : n - 1, 0, n - 1, &bw);
    if (s == SD_OK)
        s = sdi_gen_real(p, "fill", 1.0, 0.0, 1.0, &fill);
    if (s != SD_OK || p->check_only)
        return s;
    banded_ctx c = {n, bw, fill >= 1.0 ? UINT64_MAX : (uint64_t)ldexp(fill, 64), fill >= 1.0};
    sdi_rowgen g = {(int32_t)n, (int32_t)n, banded_len, banded_fill, NULL, &c, p->seed};
    return sdi_gen_build(&g, out);
}

/* ------------------------------------------------------------------ block diagonal */
typedef struct {
    int64_t n, b;
} blockdiag_ctx;

static int64_t blockdiag_len(const sdi_rowgen *g, int32_t i)
{
    const blockdiag_ctx *c = g->ctx;
    int64_t s = (i / c->b) * c->b, e = s + c->b > c->n ? c->n : s + c->b;
    return e - s;
}

static void blockdiag_fill(const sdi_rowgen *g, int32_t i, int32_t *cols, int64_t len)
{
    const blockdiag_ctx *c = g->ctx;
    int64_t s = (i / c->b) * c->b;
    for (int64_t k = 0; k < len; k++)
        cols[k] = (int32_t)(s + k);
}

sd_status sdi_gen_blockdiag(const sdi_gen_params *p, sd_csr *out)
{
    int64_t n, b;
    sd_status s = sdi_gen_int(p, "n", 1024, 1, INT32_MAX, &n);
    if (s == SD_OK)
        s = sdi_gen_int(p, "b", n < 16 ? n : 16, 1, n, &b);
    if (s != SD_OK || p->check_only)
        return s;
    blockdiag_ctx c = {n, b};
    sdi_rowgen g = {(int32_t)n, (int32_t)n, blockdiag_len, blockdiag_fill, NULL, &c, p->seed};
    return sdi_gen_build(&g, out);
}
