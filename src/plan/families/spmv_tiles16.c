/* src/plan/families/spmv_tiles16.c: SpMV tiles16 — adaptive 16×16 tiles, each stored
 * dense, CSR or COO by its count, a warp per tile row. */
#include "spmv_shared.h"

static const char *const kernels[] = {"sd_spmv_tiles16"};

static int64_t static_smem(const sdi_spmv_config *c) { return 64 * (c->block / 32); }

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strcmp(label, "tiles16") == 0 ? 0 : -1;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    sdi_spmv_default_base(SDI_SPMV_TILES16, out);
    out->block = 128;
    out->dense_min = 160;
    out->coo_max = 12;
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
    sd_status s = sdi_spmv_check_common(&sdi_family_spmv_tiles16, t, p,
                                        p != NULL ? static_smem(&p->p.spmv) : 0, &c);
    if (s != SD_OK)
        return s;
    if (c->dense_min < 1 || c->dense_min > 257 || c->coo_max < 0 || c->coo_max >= c->dense_min)
        return SDI_SPMV_BAD("tiles16: thresholds dense %d, coo %d", c->dense_min, c->coo_max);
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_tiles16, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    c = d;
    c.dense_min = 224;
    c.coo_max = 24;
    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status emit(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_tiles16.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
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
    const sd_csr *a = t->a;
    const int64_t rows = a->rows;
    const int bl = c->block;
    const double t0 = sdi_now();
    SD_TRY(sdi_fmt_tiles16(a, c->dense_min, c->coo_max, SDI_SPMV_PAD_LIMIT, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (rows > 0) {
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_tiles16",
                                   sdi_spmv_ceil_div(out->fmt.t_rows * 32, bl), bl, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "trowptr"));
        SD_TRY(sdi_spmv_arg_array(out, l, "tdesc"));
        SD_TRY(sdi_spmv_arg_array(out, l, "tidx"));
        SD_TRY(sdi_spmv_arg_array(out, l, "tvals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, out->fmt.t_rows));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, rows));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, a->cols));
    }
    sdi_spmv_low_end(out, static_smem(c), t0);
    return SD_OK;
#undef SD_FREE_ALL
}

static const char *dataflow(const sdi_plan *p)
{
    (void)p;
    return "row_reduce";
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    (void)p;
    snprintf(buf, cap, "tiles16");
    return true;
}

const sdi_family sdi_family_spmv_tiles16 = {
    .name = "tiles16",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_TILES16,
    .layout = "tiles16",
    .decomposition = "tile_rows",
    .stats = SDI_STATS_SPMV,
    .diag = 0,
    .rank = rank,
    .defaults = defaults,
    .sweep = sweep,
    .check = check,
    .lower = lower,
    .source = source,
    .dataflow = dataflow,
    .uses_atomics = sdi_spmv_no_atomics,
    .vo_label = vo_label,
};
