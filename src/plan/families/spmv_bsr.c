/* src/plan/families/spmv_bsr.c: SpMV bsr — BSR(b): dense b×b blocks, g lanes per block
 * row. */
#include "spmv_shared.h"

static const char *const kernels[] = {"sd_spmv_bsr"};

static int rank(const sdi_task *t, const char *label)
{
    (void)t;
    return strncmp(label, "bsr", 3) == 0 ? 0 : -1;
}

static int lanes_for(int b) { return b == 16 ? 32 : b == 8 ? 16 : b == 4 ? 8 : 4; }

static void default_config(const sdi_task *t, sdi_spmv_config *out)
{
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_default_base(SDI_SPMV_BSR, out);
    /* The largest block whose padding stays within 2× (else 4, the cheapest). */
    int best = 4;
    for (int lb = 4; lb >= 1; lb--)
        if (st->rho_bsr[lb] > 0 && st->rho_bsr[lb] <= 2.0) {
            best = 1 << lb;
            break;
        }
    out->b = best;
    out->g = lanes_for(best);
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
    sd_status s = sdi_spmv_check_common(&sdi_family_spmv_bsr, t, p, 0, &c);
    if (s != SD_OK)
        return s;
    const sdi_spmv_stats *st = t->spmv;
    if (c->b != 2 && c->b != 4 && c->b != 8 && c->b != 16)
        return SDI_SPMV_BAD("bsr: b = %d (2, 4, 8, 16)", c->b);
    int v = c->b == 16 ? 8 : c->b == 2 ? 2 : 4;
    if (!sdi_spmv_is_pow2(c->g) || c->g > 32 || (c->g * v) % (c->b * c->b) != 0)
        return SDI_SPMV_BAD("bsr: g = %d lanes (a power of two ≤ 32 with g·%d a multiple of %d)",
                            c->g, v, c->b * c->b);
    if (c->block % c->g != 0)
        return SDI_SPMV_BAD("bsr: threads per CTA not a multiple of g");
    int lb = c->b == 2 ? 1 : c->b == 4 ? 2 : c->b == 8 ? 3 : 4;
    if (st->rho_bsr[lb] > SDI_SPMV_PAD_LIMIT && st->rho_bsr[lb] * st->nnz > SDI_FMT_FILL_SLACK)
        return SDI_SPMV_BAD("bsr(%d): padding %.1f × nnz exceeds %.0f", c->b, st->rho_bsr[lb],
                            SDI_SPMV_PAD_LIMIT);
    return SD_OK;
}

static sd_status sweep(const sdi_task *t, int level, sdi_plan_list *out)
{
    sdi_spmv_sweep sw = {&sdi_family_spmv_bsr, t, {0}};
#define SD_FREE_ALL sdi_plan_list_free(&sw.l)
    const sdi_spmv_stats *st = t->spmv;
    sdi_spmv_config d, c;
    default_config(t, &d);
    SD_TRY(sdi_spmv_sweep_try(&sw, &d));
    if (level == 0)
        return sdi_spmv_sweep_finish(&sw, out);
    SD_TRY(sdi_spmv_sweep_stream(&sw, &d));
    const int wide = level >= 2;
    for (int b = 2; b <= 16; b *= 2) {
        int lb = b == 2 ? 1 : b == 4 ? 2 : b == 8 ? 3 : 4;
        if (b == d.b || st->rho_bsr[lb] > (wide ? 4.0 : 2.0))
            continue;
        c = d;
        c.b = b;
        c.g = lanes_for(b);
        SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    }
    c = d;
    c.g = d.g * 2 <= 32 ? d.g * 2 : d.g;
    SD_TRY(sdi_spmv_sweep_try(&sw, &c));
    return sdi_spmv_sweep_finish(&sw, out);
#undef SD_FREE_ALL
}

static sd_status emit(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
#define SD_FREE_ALL sdi_lowered_free(out)
    const sdi_spmv_config *c = &p->p.spmv;
    SD_TRY(sdi_spmv_low_begin(t, "spmv_bsr.cuh", out));
    SD_TRY(sdi_spmv_low_macro(out, "SD_BLOCK", c->block));
    SD_TRY(sdi_spmv_low_macro(out, "SD_B", c->b));
    SD_TRY(sdi_spmv_low_macro(out, "SD_G", c->g));
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
    SD_TRY(sdi_fmt_bsr(a, c->b, SDI_SPMV_PAD_LIMIT, &f));
    SD_TRY(sdi_spmv_low_format(out, &f));
    if (rows > 0) {
        sdi_low_launch *l = NULL;
        SD_TRY(sdi_spmv_low_launch(out, "sd_spmv_bsr",
                                   sdi_spmv_ceil_div(out->fmt.bsr_brows * c->g, bl), bl, &l));
        SD_TRY(sdi_spmv_arg_array(out, l, "browptr"));
        SD_TRY(sdi_spmv_arg_array(out, l, "bcolind"));
        SD_TRY(sdi_spmv_arg_array(out, l, "bvals"));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_IN, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_OUT, 0));
        SD_TRY(sdi_spmv_arg(l, SDI_LOW_ARG_I32, out->fmt.bsr_brows));
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
    return "row_reduce";
}

static bool vo_label(const sdi_plan *p, char *buf, size_t cap)
{
    const int b = p->p.spmv.b;
    buf[0] = '\0';
    if (b != 4 && b != 8 && b != 16)
        return false;
    snprintf(buf, cap, "bsr%d", b);
    return true;
}

const sdi_family sdi_family_spmv_bsr = {
    .name = "bsr",
    .op = SD_OP_SPMV,
    .id = SDI_SPMV_BSR,
    .layout = "bsr",
    .decomposition = "block_rows",
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
