/* src/plan/families/spmv_dia.c: SpMV dia — the matrix's diagonals stored dense, x staged
 * by column window in shared memory. */
#include "spmv_shared.h"

static const char *const kernels[] = {"sd_spmv_dia"};

static int64_t static_smem(const sdi_spmv_config *c)
{
    return 4LL * SDI_SPMV_DIA_MAXD + 4LL * c->xwin;
}

/* Not a label of V_o: synthesis's alternative to the CSR families where the structure
 * is a few diagonals. */
static int rank(const sdi_task *t, const char *label)
{
    if (strcmp(label, "csr") != 0 || t->spmv == NULL)
        return -1;
    return t->spmv->ndiag > 0 && t->spmv->ndiag <= 32 ? 4 : -1;
}

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    sdi_spmv_default_base(SDI_SPMV_DIA, out);
    out->rpt = 1;
    out->xwin = 4096;
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
    sd_status s = sdi_spmv_check_common(&sdi_family_spmv_dia, t, p,
                                        p != NULL ? static_smem(&p->p.spmv) : 0, &c);
    if (s != SD_OK)
        return s;
    const sdi_spmv_stats *st = t->spmv;
    if (c->rpt != 1 && c->rpt != 2 && c->rpt != 4)
        return SDI_SPMV_BAD("dia: rpt %d (1, 2 or 4)", c->rpt);
    if (st->ndiag > SDI_SPMV_DIA_MAXD)
        return SDI_SPMV_BAD("dia: more than %d diagonals", SDI_SPMV_DIA_MAXD);
    if (st->nnz > 0 &&
        (double)st->ndiag * st->rows > SDI_SPMV_PAD_LIMIT * st->nnz + SDI_FMT_FILL_SLACK)
        return SDI_SPMV_BAD("dia: padding %.1f × nnz exceeds %.0f",
                            (double)st->ndiag * st->rows / st->nnz, SDI_SPMV_PAD_LIMIT);
    if (c->xwin < 0 || (c->xwin > 0 && c->xwin < c->block * c->rpt))
        return SDI_SPMV_BAD("dia: x window %d smaller than the CTA's rows", c->xwin);
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_dia, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    /* no x evict-last variant: the window stages x in shared memory */
    c = d;
    c.rpt = 4;
    c.xwin = 8192;
    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    c.xwin = 0;
    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status emit(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_dia.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_RPT", c->rpt));
    SD_TRY(sdi_spmv_low_macro(out, "SD_XWIN", c->xwin));
    SD_TRY(sdi_spmv_low_macro(out, "SD_MAXD", SDI_SPMV_DIA_MAXD));
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
    SD_TRY(sdi_fmt_dia(a, SDI_SPMV_PAD_LIMIT, SDI_SPMV_DIA_MAXD, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    const sdi_fmt_array *offs = sdi_format_array(&out->fmt, "offsets");
    int32_t omin = 0, omax = 0;
    if (out->fmt.dia_ndiag > 0) {
        omin = ((const int32_t *)offs->data)[0];
        omax = ((const int32_t *)offs->data)[out->fmt.dia_ndiag - 1];
    }
    if (c->xwin > 0 && (int64_t)bl * c->rpt + ((int64_t)omax - omin) > c->xwin) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_UNSUPPORTED,
                       "dia: band %d..%d and %d rows per CTA exceed the x window of %d", omin,
                       omax, bl * c->rpt, c->xwin);
    }
    if (rows > 0) {
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_dia",
                                   sdi_spmv_ceil_div(rows, (int64_t)bl * c->rpt), bl, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "offsets"));
        SD_TRY(sdi_spmv_arg_array(out, l, "vals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, rows));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, a->cols));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, out->fmt.dia_ndiag));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I64, out->fmt.dia_ld));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, omin));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, omax));
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

const sdi_family sdi_family_spmv_dia = {
    .name = "dia",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_DIA,
    .layout = "dia",
    .decomposition = "diagonals",
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
    .vo_label = sdi_spmv_no_vo_label,
};
