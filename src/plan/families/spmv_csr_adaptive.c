/* src/plan/families/spmv_csr_adaptive.c: SpMV csr_adaptive — CSR-Adaptive row bins: stream
 * blocks of short rows staged in shared memory, one row per CTA, long rows cut into
 * pieces. */
#include "spmv_shared.h"

static const char *const kernels[] = {"sd_spmv_csr_adaptive"};

static int64_t static_smem(const sdi_spmv_config *c)
{
    const int64_t nw = c->block / 32;
    return 4LL * c->cap + 4LL * (c->maxr + 1) + 4 + 4 * nw;
}

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "csr") == 0 ? 2 : -1; /* between csr_vec and merge either way */
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    sdi_spmv_default_base(SDI_SPMV_CSR_ADAPTIVE, out);
    out->cap = 2048;
    out->maxr = 512;
    out->piece = 8192;
    out->rp32 = sdi_spmv_default_rp32(t->spmv);
    out->stream = sdi_spmv_working_set_exceeds_l2(t->spmv, t->gpu);
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
    sd_status s = sdi_spmv_check_common(&sdi_family_spmv_csr_adaptive, t, p,
                                        p != NULL ? static_smem(&p->p.spmv) : 0, &c);
    if (s != SD_OK)
        return s;
    const sdi_spmv_stats *st = t->spmv;
    if (c->block < 64)
        return SDI_SPMV_BAD("csr_adaptive: at least 64 threads per CTA");
    if (c->cap < c->block || c->cap > 65536)
        return SDI_SPMV_BAD("csr_adaptive: cap %d out of [threads, 65536]", c->cap);
    if (c->maxr < 1 || c->maxr > c->cap)
        return SDI_SPMV_BAD("csr_adaptive: maxr %d out of [1, cap]", c->maxr);
    if (c->piece < c->cap || c->piece % 4 != 0)
        return SDI_SPMV_BAD("csr_adaptive: piece %d must be a multiple of 4 and ≥ cap", c->piece);
    if (st->nnz / c->cap + st->rows / c->maxr + 2 > INT32_MAX / 4)
        return SDI_SPMV_BAD("csr_adaptive: too many row blocks");
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_csr_adaptive, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    const int wide = level >= 2;
    static const int caps[][3] = {{256, 1024, 256}, {256, 2048, 512}, {512, 4096, 1024},
                                  {128, 1024, 256}};
    for (int i = 0; i < (wide ? 4 : 3); i++) {
        c = d;
        c.block = caps[i][0];
        c.cap = caps[i][1];
        c.maxr = caps[i][2];
        c.piece = 4 * c.cap;
        SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    }
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status emit(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_csr_adaptive.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_CAP", c->cap));
    SD_TRY(sdi_spmv_low_macro(out, "SD_MAXR", c->maxr));
    SD_TRY(sdi_spmv_low_macro(out, "SD_PIECE", c->piece));
    SD_TRY(sdi_spmv_low_macro(out, "SD_RP32", c->rp32));
    SD_TRY(sdi_spmv_low_macro(out, "SD_STREAM", c->stream));
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
    const double t0 = sdi_now();
    sdi_csr_opts o = {c->rp32, c->colc, c->colc_shift};
    SD_TRY(sdi_fmt_rowblocks(t->a, &o, c->cap, c->maxr, c->piece, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (out->fmt.rb_items > 0) {
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_csr_adaptive", out->fmt.rb_items, c->block, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "rowptr"));
        SD_TRY(sdi_spmv_arg_array(out, l, "colind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "vals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg_array(out, l, "items"));
        SD_TRY(sdi_spmv_arg_array(out, l, "lrbase"));
        SD_TRY(sdi_spmv_arg_array(out, l, "lrpart"));
        SD_TRY(sdi_spmv_arg_array(out, l, "lrcount"));
    }
    sdi_spmv_low_end(out, static_smem(c), t0);
    return SD_OK;
#undef SD_FREE_ALL
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "fixup"; /* a long row's pieces: the last to finish adds the others' parts */
}

const sdi_family sdi_family_spmv_csr_adaptive = {
    .name = "csr_adaptive",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_CSR_ADAPTIVE,
    .layout = "csr",
    .decomposition = "row_bins",
    .stats = SDI_STATS_SPMV,
    .diag = SDI_DIAG_FOR_IMBALANCE,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep,
    .check = check,
    .lower = lower,
    .source = source,
    .dataflow = dataflow,
    .uses_atomics = sdi_spmv_no_atomics,
    .vo_label = sdi_spmv_no_vo_label,
};
