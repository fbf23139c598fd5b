/* src/plan/families/spmv_csr_vec.c: SpMV csr_vec — CSR, a sub-warp of vw lanes per row
 * (Bell & Garland's vector kernel sized to the rows), optionally 16-bit column deltas and
 * x copied into shared memory by persistent CTAs. */
#include "spmv_shared.h"

static const char *const kernels[] = {"sd_spmv_csr_vec"};

static int next_pow2_i(double x)
{
    int p = 1;
    while (p < x && p < (1 << 30))
        p <<= 1;
    return p;
}

int sdi_spmv_pick_vw(const sdi_spmv_stats *st, int vec)
{
    /* Sub-warp of about the mean row length (Bell & Garland's vector kernel sized to the
     * rows): one step covers a typical row; longer rows take more steps. */
    double per_lane = vec > 0 ? vec : 1;
    int w = next_pow2_i(st->row_mean / per_lane);
    if (w > 32)
        w = 32;
    return w < 1 ? 1 : w;
}

/* x's copy in shared memory (bytes) for a matrix of cols columns, else 0. */
static int64_t dynamic_smem(const sdi_spmv_config *c, int64_t cols)
{
    return c->xsmem ? 4 * ((cols + 3) / 4 * 4) : 0;
}

static int ctas_per_sm(const sdi_spmv_config *c, int64_t cols, const sdi_gpu_props *gpu)
{
    return sdi_spmv_resident_ctas(c->block, dynamic_smem(c, cols), gpu);
}

static int rank(const sdi_task *t, const char *label)
{
    if (strcmp(label, "csr") != 0)
        return -1;
    return sdi_spmv_feature(t, "row_cv") > 1.0 ? 3 : 1;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_default_base(SDI_SPMV_CSR_VEC, out);
    out->vec = st->row_mean >= 6 ? 4 : 1;
    out->vw = sdi_spmv_pick_vw(st, out->vec);
    out->unroll = 2;
    out->rp32 = sdi_spmv_default_rp32(st);
    out->stream = sdi_spmv_working_set_exceeds_l2(st, t->gpu);
}

static sd_status defaults(const sdi_task *t, sdi_plan *out)
{
    sdi_spmv_config c;
    default_config(t, &c);
    sdi_spmv_plan_set(out, &c);
    return SD_OK;
}

static sd_status check(const sdi_task *t, const sdi_plan *p)
{
    const sdi_spmv_config *c = NULL;
    sd_status s = sdi_spmv_check_common(&sdi_family_spmv_csr_vec, t, p, 0, &c);
    if (s != SD_OK)
        return s;
    const sdi_spmv_stats *st = t->spmv;
    const sdi_gpu_props *gpu = t->gpu;
    if (!sdi_spmv_is_pow2(c->vw) || c->vw > 32)
        return SDI_SPMV_BAD("csr_vec: vw %d is not a power of two in [1, 32]", c->vw);
    if (c->vec != 1 && c->vec != 4)
        return SDI_SPMV_BAD("csr_vec: vec %d (1 or 4)", c->vec);
    if (c->unroll < 1 || c->unroll > 8)
        return SDI_SPMV_BAD("csr_vec: unroll %d out of [1, 8]", c->unroll);
    if (c->block % c->vw != 0)
        return SDI_SPMV_BAD("csr_vec: %d threads per CTA not a multiple of vw %d", c->block, c->vw);
    if (c->xsmem) {
        const int64_t optin = gpu != NULL && gpu->smem_per_cta_optin > 0 ? gpu->smem_per_cta_optin : 232448;
        const int64_t dyn = dynamic_smem(c, st->cols);
        if (c->xsmem != 1)
            return SDI_SPMV_BAD("csr_vec: xs %d (0 or 1)", c->xsmem);
        if (st->cols < 1 || dyn > optin)
            return SDI_SPMV_BAD("csr_vec: x of %lld columns (%lld B) does not fit the %lld B of "
                                "shared memory a CTA may opt in to", (long long)st->cols,
                                (long long)dyn, (long long)optin);
        if (ctas_per_sm(c, st->cols, gpu) < 1)
            return SDI_SPMV_BAD("csr_vec: x's copy leaves no room for one CTA of %d threads per SM",
                                c->block);
    }
    if (c->colc) {
        if (c->colc_shift != 0 && c->colc_shift != 5)
            return SDI_SPMV_BAD("csr_vec: column delta shift %d (0 or 5)", c->colc_shift);
        if (!(c->colc_shift == 0 ? st->colc_ok0 : st->colc_ok5))
            return SDI_SPMV_BAD("csr_vec: rows span more than 65536 columns (16-bit deltas)");
    }
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_csr_vec, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    /* x copied into shared memory right after the default, so that a branch's first
     * sweep members include it: where x fits and the entries outnumber x's copies (16
     * entries a column; each CTA copies x once), a gather is a bank access, not a cache
     * line's tag and sector. Whether it pays is measured (H200: as fast as L1-cached
     * gathers on mid twins, faster on a few small real matrices; `sparseditto bench --set
     * paper60,real --ops spmv`). A copy over a third of an SM's shared memory leaves one
     * or two CTAs per SM: 1024 threads keep enough rows in flight. */
    if (st->cols > 0 && st->nnz >= 16LL * st->cols) {
        c = d;
        c.xsmem = 1;
        c.block = dynamic_smem(&c, st->cols) > 76 * 1024 ? 1024 : 512;
        SD_TRY(sdi_spmv_sweep_try(&sw, &c));
        if (level >= 2) {
            for (int dw = 0; dw < 2; dw++) {
                c.vw = dw ? d.vw * 2 : d.vw / 2;
                if (c.vw >= 1 && c.vw <= 32)
                    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
            }
            c.vw = d.vw;
            c.unroll = 4;
            SD_TRY(sdi_spmv_sweep_try(&sw, &c));
        }
    }
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    const int wide = level >= 2;
    for (int vec = 1; vec <= 4; vec += 3) {
        int w0 = sdi_spmv_pick_vw(st, vec);
        int wlo = w0 / (wide ? 4 : 2);
        for (int w = wlo > 1 ? wlo : 1; w <= w0 * (wide ? 4 : 2) && w <= 32; w *= 2) {
            c = d;
            c.vec = vec;
            c.vw = w;
            SD_TRY(sdi_spmv_sweep_try(&sw, &c));
            if (wide) {
                c.block = 128;
                SD_TRY(sdi_spmv_sweep_try(&sw, &c));
                c.block = 512;
                c.unroll = 4;
                SD_TRY(sdi_spmv_sweep_try(&sw, &c));
            }
        }
    }
    /* 16-bit column deltas where they pay (large matrices). */
    if (st->nnz >= (1 << 20)) {
        c = d;
        c.colc = 1;
        c.colc_shift = st->colc_ok5 ? 5 : 0;
        SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    }
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

/* Template and macros: they depend on the plan alone (never on the matrix's sizes, which
 * are kernel arguments), so one cubin serves every matrix. */
static sd_status emit(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_csr_vec.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_VW", c->vw));
    SD_TRY(sdi_spmv_low_macro(out, "SD_VEC", c->vec));
    SD_TRY(sdi_spmv_low_macro(out, "SD_UNROLL", c->unroll));
    SD_TRY(sdi_spmv_low_macro(out, "SD_RP32", c->rp32));
    SD_TRY(sdi_spmv_low_macro(out, "SD_COLC", c->colc));
    SD_TRY(sdi_spmv_low_macro(out, "SD_COLC_SHIFT", c->colc_shift));
    SD_TRY(sdi_spmv_low_macro(out, "SD_STREAM", c->stream));
    SD_TRY(sdi_spmv_low_macro(out, "SD_XSMEM", c->xsmem));
    return SD_OK;
#undef SD_FREE_ALL
}

static sd_status source(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    SD_TRY(emit(t, p, out));
    SD_TRY(sdi_spmv_low_kernels(out, kernels, 1));
    return SD_OK;
#undef SD_FREE_ALL
}

static sd_status lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    sdi_devfmt f;
    memset(&f, 0, sizeof f);
#define SD_FREE_ALL SDI_SPMV_LOWER_FREE
    memset(out, 0, sizeof *out);
    SD_TRY(check(t, p));
    SD_TRY(emit(t, p, out));
    const sdi_spmv_config *c = &p->p.spmv;
    const sd_csr *a = t->a;
    const int sm = t->gpu != NULL && t->gpu->sm_count > 0 ? t->gpu->sm_count : 132;
    const int64_t rows = a->rows;
    const int bl = c->block;
    const double t0 = sdi_now();
    sdi_csr_opts o = {c->rp32, c->colc, c->colc_shift};
    SD_TRY(sdi_fmt_csr(a, &o, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (rows > 0) {
        int64_t grid = sdi_spmv_ceil_div(rows * c->vw, bl);
        if (c->xsmem) { /* persistent CTAs: each copies x once */
            const int64_t resident = (int64_t)sm * ctas_per_sm(c, a->cols, t->gpu);
            grid = grid < resident ? grid : resident;
        }
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_csr_vec", grid, bl, &l));
        l->dyn_smem = (unsigned)dynamic_smem(c, a->cols);
        l->grid_stride = c->xsmem;
        SD_TRY(sdi_spmv_arg_array(out, l, "rowptr"));
        SD_TRY(sdi_spmv_arg_array(out, l, "colind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "colbase"));
        SD_TRY(sdi_spmv_arg_array(out, l, "vals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, rows));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, a->cols));
    }
    sdi_spmv_low_end(out, 0, t0);
    return SD_OK;
#undef SD_FREE_ALL
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "row_reduce"; /* each row's lanes reduce it and write it once */
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (p->p.spmv.colc)
        return false; /* 16-bit column deltas: index compression */
    snprintf(buf, cap, "csr");
    return true;
}

const sdi_family sdi_family_spmv_csr_vec = {
    .name = "csr_vec",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_CSR_VEC,
    .layout = "csr",
    .decomposition = "row_groups",
    .stats = SDI_STATS_SPMV,
    .diag = SDI_DIAG_ROW_GROUPS,
    .rank = rank,
    .leads = NULL,
    .defaults = defaults,
    .sweep = sweep,
    .check = check,
    .lower = lower,
    .source = source,
    .dataflow = dataflow,
    .uses_atomics = sdi_spmv_no_atomics,
    .vo_label = vo_label,
    .edits = NULL,
};
