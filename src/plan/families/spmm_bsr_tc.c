/* src/plan/families/spmm_bsr_tc.c: SpMM BSR tiles of b×8 (b = block) on tensor cores, FP32
 * by 3×TF32: a warp owns a block row and a K tile of 16·nt columns (spmm_bsr_tc.cuh). */
#include <stdio.h>
#include <string.h>

#include "../../core/config.h"
#include "spmm_shared.h"

static void shape(int k, const sdi_spmm_stats *st, sdi_spmm_config *c)
{
    (void)st;
    /* 16-row tiles share each B fragment between two mma (the natural m16 tile);
     * nt covers K up to 64 columns per warp */
    c->block = 16;
    c->vec = 1;
    c->klanes = 32;
    int nt = (k + 15) / 16;
    c->coarsen = nt >= 4 ? 4 : nt >= 2 ? sdi_spmm_next_pow2(nt) : 1;
}

/* two accumulator sets, B fragments hi/lo, the tile hi/lo */
static int acc(const sdi_spmm_config *c)
{
    return 2 * (c->block / 8) * c->coarsen * 4 + 8 * c->coarsen + c->block / 2;
}

static int ktile(const sdi_spmm_config *c)
{
    return 16 * c->coarsen; /* K is the m16 side of the transposed mma */
}

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond))                                                                       \
            return SDI_ERR(SD_ERR_INVALID_ARG, __VA_ARGS__);                               \
    } while (0)

static sd_status check(const sdi_spmm_config *c, const char *n)
{
    /* A warp owns a block row and a K tile of 16·nt columns; no shared memory. Two
     * accumulator sets (b/8 · nt · 4 floats each) stay in registers. */
    CHECK(c->block == 8 || c->block == 16, "%s: block = %d (8 or 16)", n, c->block);
    CHECK(c->klanes == 32 && c->vec == 1, "%s: a warp spans the K tile (klanes 32, vec 1)", n);
    CHECK(c->coarsen == 1 || c->coarsen == 2 || c->coarsen == 4,
          "%s: nt = %d K sub-tiles of 16 per warp (1, 2 or 4)", n, c->coarsen);
    return SD_OK;
}

static void describe(const sdi_spmm_config *c, const char *n, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%d k=%d w=%d nt=%d", n, c->block, c->k, c->warps, c->coarsen);
}

static sd_status sweep(const sd_csr *a, int k, const sdi_spmm_stats *st, int level,
                       sdi_spmm_cfgs *l)
{
    sdi_spmm_config base, c;
    sd_status s = sdi_spmm_config_default(SDI_SPMM_BSR_TC, k, st, &base);
    if (s != SD_OK) {
        sdi_error_clear();
        return SD_OK;
    }
    const int *wl = sdi_spmm_sweep_warps(level);
    int nw = sdi_spmm_sweep_nw(level);
    /* Only where b×8 tiles are dense (the BSR family's padding rule): 16-row tiles
     * first (each B fragment serves two mma), then 8-row tiles. */
    static const int tc_blocks[] = {16, 8};
    static const int nts[] = {1, 2, 4};
    for (int bi = 0; bi < 2; bi++) {
        int b = tc_blocks[bi];
        int64_t nb = 0, widest = 0;
        if ((s = sdi_spmm_blocks_count(a, b, 8, &nb, &widest)) != SD_OK)
            return s;
        double fill = a->nnz > 0 ? (double)nb * b * 8 / (double)a->nnz : 0;
        if (nb == 0 || fill > (level >= 2 ? 8.0 : 3.0))
            continue;
        c = base;
        c.block = b;
        if (level == 0) {
            if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                return s;
            break; /* the first acceptable tile */
        }
        for (int w = 0; w < nw; w++)
            for (int q = 0; q < 3; q++) {
                c.warps = wl[w];
                c.coarsen = nts[q];
                /* level 1: the default nt and the one below (more CTAs, fewer registers) */
                if (level < 2 && nts[q] != base.coarsen && 2 * nts[q] != base.coarsen)
                    continue;
                if (nts[q] > 1 && 8 * nts[q] >= k)
                    continue; /* half the sub-tiles already cover K */
                if ((s = sdi_spmm_cfgs_push(l, &c, st)) != SD_OK)
                    return s;
            }
    }
    return SD_OK;
}

/* Tensor-core BSR: b×8 tiles (b = c->block) in the mma lane order, one warp per block row. */
static sd_status lower(sdi_lowered *l, const sd_csr *a, const sdi_spmm_config *c, int big)
{
    int threads = c->warps * 32, b = c->block;
    int64_t nb = 0, widest = 0;
    sd_status s = sdi_spmm_blocks_count(a, b, 8, &nb, &widest);
    if (s != SD_OK)
        return s;
    double slots = (double)nb * b * 8;
    if (slots > 8.0 * (double)a->nnz + 4096)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "bsr_tc%d: %.0f value slots for %lld nonzeros (more "
                       "than 8x padding)", b, slots, (long long)a->nnz);
    int32_t brows = (a->rows + b - 1) / b;
    sdi_spmm_blocks bk;
    s = sdi_spmm_blocks_build(a, b, 8, 0, 1, &bk);
    if (s != SD_OK)
        return s;
#define SD_FREE_ALL sdi_spmm_blocks_free(&bk)
    snprintf(l->template_name, sizeof l->template_name, "%s", "spmm_bsr_tc.cuh");
    s = sdi_spmm_common_macros(l, c, threads, big);
    sdi_spmm_macro(&s, l, "SD_WARPS", c->warps);
    sdi_spmm_macro(&s, l, "SD_BM", b);
    sdi_spmm_macro(&s, l, "SD_NT", c->coarsen);
    SD_TRY(s);
    SD_TRY(sdi_spmm_name_kernels(l, "bsr_tc", 1));
    int ibp, ibc, ibv;
    SD_TRY(sdi_spmm_block_arrays(l, &bk, brows, c->rp64, true, (size_t)bk.nblocks * (size_t)b * 8,
                                 &ibp, &ibc, &ibv));
    if (brows > 0) {
        sdi_low_launch *x = sdi_spmm_add_launch(l, 0, ((int64_t)brows + c->warps - 1) / c->warps,
                                                sdi_spmm_ktiles(c), threads);
        sdi_spmm_arg_array(x, ibp);
        sdi_spmm_arg_array(x, ibc);
        sdi_spmm_arg_array(x, ibv);
        sdi_spmm_arg_in(x);
        sdi_spmm_arg_out(x);
        sdi_spmm_arg_i32(x, a->rows);
        sdi_spmm_arg_i32(x, a->cols);
        sdi_spmm_arg_i32(x, brows);
    }
    SD_FREE_ALL;
#undef SD_FREE_ALL
    return SD_OK;
}

/* ------------------------------------------------------------------ the entry */

/* With tensor cores on: "tc", and after BSR under a BSR label when 8×8 blocks are dense
 * (0 < rho_bsr8 ≤ 3): the same tiles on tensor cores. */
static int rank(const sdi_task *t, const char *label)
{
    if (!sdi_config_get()->tc)
        return -1;
    if (strncmp(label, "bsr", 3) == 0) {
        double rho = sdi_spmm_feature(t, "rho_bsr8");
        return rho > 0 && rho <= 3.0 ? 1 : -1;
    }
    return strcmp(label, "tc") == 0 ? 0 : -1;
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    return sdi_spmm_hook_defaults(t, SDI_SPMM_BSR_TC, out);
}

static sd_status sweep_hook(const sdi_task *t, int level, sdi_plan_list *out)
{
    return sdi_spmm_hook_sweep(t, SDI_SPMM_BSR_TC, level, out);
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "mma";
}

static bool uses_atomics(const sdi_plan *p)
{
    (void)p;
    return false;
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "tc");
    return true;
}

const sdi_family sdi_family_spmm_bsr_tc = {
    .name = "bsr_tc",
    .op = SD_OP_SPMM,
    .id = SDI_SPMM_BSR_TC,
    .layout = "bsr",
    .decomposition = "block_rows",
    .stats = SDI_STATS_SPMM,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep_hook,
    .check = sdi_spmm_hook_check,
    .lower = sdi_spmm_hook_lower,
    .dataflow = dataflow,
    .uses_atomics = uses_atomics,
    .vo_label = vo_label,
};

const sdi_spmm_ops sdi_spmm_ops_bsr_tc = {
    .fam = &sdi_family_spmm_bsr_tc,
    .shape = shape,
    .acc = acc,
    .check = check,
    .describe = describe,
    .ktile = ktile,
    .sweep = sweep,
    .lower = lower,
};
