/* src/lower/spmv_lower.c: SpMV lowering (config → template, macros, launches, format) and
 * its instantiation on a device (compile, load, upload, launch program). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "spmv_lower.h"

#define PAD_LIMIT 8.0
#define DIA_MAXD 64

/* ------------------------------------------------------------------ building a plan */
static sd_status add_macro(sdi_spmv_plan *p, const char *name, long long v)
{
    if (p->nmacros >= SDI_SPMV_MAX_MACROS)
        return SDI_ERR(SD_ERR_INTERNAL, "spmv lowering: more than %d macros",
                       SDI_SPMV_MAX_MACROS);
    snprintf(p->macro_name[p->nmacros], sizeof p->macro_name[0], "%s", name);
    snprintf(p->macro_value[p->nmacros], sizeof p->macro_value[0], "%lld", v);
    p->nmacros++;
    return SD_OK;
}

static sdi_spmv_launch *new_launch(sdi_spmv_plan *p, const char *kernel, int64_t grid,
                                   int block)
{
    if (p->nlaunches >= SDI_SPMV_MAX_LAUNCHES || grid < 1 || grid > INT_MAX)
        return NULL;
    sdi_spmv_launch *l = &p->launch[p->nlaunches++];
    memset(l, 0, sizeof *l);
    snprintf(l->kernel, sizeof l->kernel, "%s", kernel);
    l->grid = (unsigned)grid;
    l->block = (unsigned)block;
    return l;
}

static void arg_array(const sdi_spmv_plan *p, sdi_spmv_launch *l, const char *name)
{
    sdi_spmv_arg *a = &l->args[l->nargs++];
    memset(a, 0, sizeof *a);
    const sdi_fmt_array *fa = sdi_format_array(&p->fmt, name);
    if (fa == NULL || fa->role == SDI_ROLE_HOST || fa->count == 0) {
        a->kind = SDI_SPMV_ARG_NULL; /* absent, host-only or empty: nothing to read */
        return;
    }
    a->kind = SDI_SPMV_ARG_ARRAY;
    snprintf(a->name, sizeof a->name, "%s", name);
}
static void arg_kind(sdi_spmv_launch *l, int kind, int64_t v)
{
    sdi_spmv_arg *a = &l->args[l->nargs++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->v = v;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

#define MACRO(n, v) SD_TRY(add_macro(out, (n), (v)))
#define LAUNCH(l, k, g, b)                                                                 \
    do {                                                                                   \
        (l) = new_launch(out, (k), (g), (b));                                              \
        if ((l) == NULL) {                                                                 \
            SD_FREE_ALL;                                                                   \
            return SDI_ERR(SD_ERR_UNSUPPORTED, "spmv lowering: grid of %lld CTAs for %s",  \
                           (long long)(g), (k));                                           \
        }                                                                                  \
    } while (0)

/* Template and macros of a config: they depend on the config alone (never on the
 * matrix's sizes, which are kernel arguments), so one cubin serves every matrix. */
sd_status sdi_spmv_config_source(const sdi_spmv_config *c, sdi_spmv_plan *out)
{
#define SD_FREE_ALL (void)0
#define TMPL(n) snprintf(out->template_name, sizeof out->template_name, "%s", (n))
    out->nmacros = 0;
    switch (c->family) {
    case SDI_SPMV_CSR_VEC:
        TMPL("spmv_csr_vec.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_VW", c->vw);
        MACRO("SD_VEC", c->vec);
        MACRO("SD_UNROLL", c->unroll);
        MACRO("SD_RP32", c->rp32);
        MACRO("SD_COLC", c->colc);
        MACRO("SD_COLC_SHIFT", c->colc_shift);
        MACRO("SD_STREAM", c->stream);
        MACRO("SD_XSMEM", c->xsmem);
        break;
    case SDI_SPMV_CSR_ADAPTIVE:
        TMPL("spmv_csr_adaptive.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_CAP", c->cap);
        MACRO("SD_MAXR", c->maxr);
        MACRO("SD_PIECE", c->piece);
        MACRO("SD_RP32", c->rp32);
        MACRO("SD_STREAM", c->stream);
        break;
    case SDI_SPMV_MERGE:
    case SDI_SPMV_TINY:
        TMPL("spmv_merge.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_IPT", c->ipt);
        MACRO("SD_SINGLE", c->family == SDI_SPMV_TINY);
        MACRO("SD_RP32", c->rp32);
        MACRO("SD_STREAM", c->stream);
        break;
    case SDI_SPMV_SELL:
    case SDI_SPMV_ELL: {
        const int ell = c->family == SDI_SPMV_ELL;
        TMPL("spmv_sell.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_C", ell ? 32 : c->c);
        MACRO("SD_TPR", c->tpr);
        MACRO("SD_RPT", c->rpt);
        MACRO("SD_PERM", !ell && c->sigma > 1);
        MACRO("SD_ELL", ell);
        MACRO("SD_UNROLL", c->unroll);
        MACRO("SD_STREAM", c->stream);
        break;
    }
    case SDI_SPMV_BSR:
        TMPL("spmv_bsr.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_B", c->b);
        MACRO("SD_G", c->g);
        MACRO("SD_STREAM", c->stream);
        break;
    case SDI_SPMV_TILES16:
        TMPL("spmv_tiles16.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_STREAM", c->stream);
        break;
    case SDI_SPMV_COO:
        TMPL("spmv_coo.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_CHUNK", c->chunk);
        if (c->ipt > 1) /* entries per lane and step (absent: one, the source before it) */
            MACRO("SD_IPT", c->ipt);
        MACRO("SD_STREAM", c->stream);
        break;
    case SDI_SPMV_DIA:
        TMPL("spmv_dia.cuh");
        MACRO("SD_BLOCK", c->block);
        MACRO("SD_RPT", c->rpt);
        MACRO("SD_XWIN", c->xwin);
        MACRO("SD_MAXD", DIA_MAXD);
        MACRO("SD_STREAM", c->stream);
        break;
    default:
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv source: family %d unknown", c->family);
    }
    return SD_OK;
#undef TMPL
#undef SD_FREE_ALL
}

sd_status sdi_spmv_lower(const sdi_spmv_config *c, const sd_csr *a, const sdi_spmv_stats *st,
                         const sdi_gpu_props *gpu, sdi_spmv_plan *out)
{
#define SD_FREE_ALL sdi_spmv_plan_free(out)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv lowering: out is NULL");
    memset(out, 0, sizeof *out);
    if (c == NULL || a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv lowering: config or matrix is NULL");
    sdi_spmv_stats own;
    if (st == NULL) {
        SD_TRY(sdi_spmv_stats_compute(a, &own));
        st = &own;
    }
    SD_TRY(sdi_spmv_config_check(c, st, gpu));
    out->cfg = *c;
    out->smem = sdi_spmv_static_smem(c);
    const int sm = gpu != NULL && gpu->sm_count > 0 ? gpu->sm_count : 132;
    const int64_t rows = a->rows;
    const int bl = c->block;
    sdi_spmv_launch *l = NULL;
    double t0 = sdi_now();
    sdi_csr_opts o = {c->rp32, c->colc, c->colc_shift};
    SD_TRY(sdi_spmv_config_source(c, out));
    switch (c->family) {
    case SDI_SPMV_CSR_VEC:
        SD_TRY(sdi_fmt_csr(a, &o, &out->fmt));
        if (rows > 0) {
            int64_t grid = ceil_div(rows * c->vw, bl);
            if (c->xsmem) { /* persistent CTAs: each copies x once */
                const int64_t resident = (int64_t)sm * sdi_spmv_ctas_per_sm(c, a->cols, gpu);
                grid = grid < resident ? grid : resident;
            }
            LAUNCH(l, "sd_spmv_csr_vec", grid, bl);
            l->dyn_smem = (unsigned)sdi_spmv_dynamic_smem(c, a->cols);
            l->grid_stride = c->xsmem;
            arg_array(out, l, "rowptr");
            arg_array(out, l, "colind");
            arg_array(out, l, "colbase");
            arg_array(out, l, "vals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
            arg_kind(l, SDI_SPMV_ARG_I32, a->cols);
        }
        break;
    case SDI_SPMV_CSR_ADAPTIVE:
        SD_TRY(sdi_fmt_rowblocks(a, &o, c->cap, c->maxr, c->piece, &out->fmt));
        if (out->fmt.rb_items > 0) {
            LAUNCH(l, "sd_spmv_csr_adaptive", out->fmt.rb_items, bl);
            arg_array(out, l, "rowptr");
            arg_array(out, l, "colind");
            arg_array(out, l, "vals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_array(out, l, "items");
            arg_array(out, l, "lrbase");
            arg_array(out, l, "lrpart");
            arg_array(out, l, "lrcount");
        }
        break;
    case SDI_SPMV_MERGE:
    case SDI_SPMV_TINY: {
        const int single = c->family == SDI_SPMV_TINY;
        const int64_t tile = (int64_t)bl * c->ipt;
        const int64_t ntiles = ceil_div(rows + a->nnz, tile);
        int64_t tpc = c->tiles_per_cta;
        if (single)
            tpc = ntiles > 0 ? ntiles : 1;
        else if (tpc <= 0) /* about four resident CTAs per SM: few carries to fix up */
            tpc = ntiles > 4LL * sm ? ceil_div(ntiles, 4LL * sm) : 1;
        if (tpc > INT_MAX)
            tpc = INT_MAX;
        SD_TRY(sdi_fmt_merge(a, &o, (int)tile, (int)tpc, &out->fmt));
        if (rows > 0) {
            LAUNCH(l, "sd_spmv_merge", out->fmt.mp_ctas, bl);
            arg_array(out, l, "rowptr");
            arg_array(out, l, "colind");
            arg_array(out, l, "vals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_array(out, l, "tilerow");
            arg_array(out, l, "tilenz");
            arg_kind(l, SDI_SPMV_ARG_I32, out->fmt.mp_tiles);
            arg_kind(l, SDI_SPMV_ARG_I32, out->fmt.mp_tiles_per_cta);
            arg_array(out, l, "carry_row");
            arg_array(out, l, "carry_val");
            arg_array(out, l, "counter");
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
        }
        break;
    }
    case SDI_SPMV_SELL:
    case SDI_SPMV_ELL: {
        const int ell = c->family == SDI_SPMV_ELL;
        if (ell)
            SD_TRY(sdi_fmt_ell(a, PAD_LIMIT, &out->fmt));
        else
            SD_TRY(sdi_fmt_sell(a, c->c, c->sigma, PAD_LIMIT, &out->fmt));
        if (rows > 0) {
            LAUNCH(l, "sd_spmv_sell", ceil_div(ceil_div(rows, c->rpt) * c->tpr, bl), bl);
            arg_array(out, l, "sliceptr");
            arg_array(out, l, "colind");
            arg_array(out, l, "vals");
            arg_array(out, l, "perm");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
            arg_kind(l, SDI_SPMV_ARG_I64, ell ? out->fmt.ell_width : 0);
            arg_kind(l, SDI_SPMV_ARG_I64, ell ? out->fmt.ell_ld : 0);
        }
        break;
    }
    case SDI_SPMV_BSR:
        SD_TRY(sdi_fmt_bsr(a, c->b, PAD_LIMIT, &out->fmt));
        if (rows > 0) {
            LAUNCH(l, "sd_spmv_bsr", ceil_div(out->fmt.bsr_brows * c->g, bl), bl);
            arg_array(out, l, "browptr");
            arg_array(out, l, "bcolind");
            arg_array(out, l, "bvals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I32, out->fmt.bsr_brows);
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
            arg_kind(l, SDI_SPMV_ARG_I32, a->cols);
        }
        break;
    case SDI_SPMV_TILES16:
        SD_TRY(sdi_fmt_tiles16(a, c->dense_min, c->coo_max, PAD_LIMIT, &out->fmt));
        if (rows > 0) {
            LAUNCH(l, "sd_spmv_tiles16", ceil_div(out->fmt.t_rows * 32, bl), bl);
            arg_array(out, l, "trowptr");
            arg_array(out, l, "tdesc");
            arg_array(out, l, "tidx");
            arg_array(out, l, "tvals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I32, out->fmt.t_rows);
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
            arg_kind(l, SDI_SPMV_ARG_I32, a->cols);
        }
        break;
    case SDI_SPMV_COO:
        SD_TRY(sdi_fmt_coo(a, &out->fmt));
        if (rows > 0) {
            int64_t g = ceil_div(rows, bl);
            LAUNCH(l, "sd_spmv_coo_zero", g < 8LL * sm ? g : 8LL * sm, bl);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
        }
        if (rows > 0 && a->nnz > 0) {
            const int64_t per_warp = 32LL * c->chunk * (c->ipt > 1 ? c->ipt : 1);
            LAUNCH(l, "sd_spmv_coo", ceil_div(ceil_div(a->nnz, per_warp) * 32, bl), bl);
            arg_array(out, l, "rowind");
            arg_array(out, l, "colind");
            arg_array(out, l, "vals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I64, a->nnz);
        }
        break;
    case SDI_SPMV_DIA: {
        SD_TRY(sdi_fmt_dia(a, PAD_LIMIT, DIA_MAXD, &out->fmt));
        const sdi_fmt_array *offs = sdi_format_array(&out->fmt, "offsets");
        int32_t omin = 0, omax = 0;
        if (out->fmt.dia_ndiag > 0) {
            omin = ((const int32_t *)offs->data)[0];
            omax = ((const int32_t *)offs->data)[out->fmt.dia_ndiag - 1];
        }
        if (c->xwin > 0 && (int64_t)bl * c->rpt + ((int64_t)omax - omin) > c->xwin) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_UNSUPPORTED,
                           "dia: band %d..%d and %d rows per CTA exceed the x window of %d",
                           omin, omax, bl * c->rpt, c->xwin);
        }
        if (rows > 0) {
            LAUNCH(l, "sd_spmv_dia", ceil_div(rows, (int64_t)bl * c->rpt), bl);
            arg_array(out, l, "offsets");
            arg_array(out, l, "vals");
            arg_kind(l, SDI_SPMV_ARG_X, 0);
            arg_kind(l, SDI_SPMV_ARG_Y, 0);
            arg_kind(l, SDI_SPMV_ARG_I32, rows);
            arg_kind(l, SDI_SPMV_ARG_I32, a->cols);
            arg_kind(l, SDI_SPMV_ARG_I32, out->fmt.dia_ndiag);
            arg_kind(l, SDI_SPMV_ARG_I64, out->fmt.dia_ld);
            arg_kind(l, SDI_SPMV_ARG_I32, omin);
            arg_kind(l, SDI_SPMV_ARG_I32, omax);
        }
        break;
    }
    default:
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv lowering: family %d unknown", c->family);
    }
    out->build_ms = (sdi_now() - t0) * 1e3;
    out->m_value = sdi_format_bytes(&out->fmt, SDI_ROLE_VALUE);
    out->m_meta = sdi_format_bytes(&out->fmt, SDI_ROLE_META);
    out->workspace = sdi_format_bytes(&out->fmt, SDI_ROLE_WORKSPACE);
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_spmv_plan_free(sdi_spmv_plan *p)
{
    if (p == NULL)
        return;
    sdi_format_free(&p->fmt);
    memset(p, 0, sizeof *p);
}

void sdi_spmv_plan_jit_request(const sdi_spmv_plan *p, const char *arch,
                               sdi_macro macros[SDI_SPMV_MAX_MACROS], sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    for (int i = 0; i < p->nmacros; i++) {
        macros[i].name = p->macro_name[i];
        macros[i].value = p->macro_value[i];
    }
    req->template_name = p->template_name;
    req->macros = macros;
    req->nmacros = p->nmacros;
    req->arch = arch;
    req->kernel_name = p->nlaunches > 0 ? p->launch[p->nlaunches - 1].kernel : p->template_name;
}

void sdi_spmv_plan_json(const sdi_spmv_plan *p, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "config");
    sdi_spmv_config_json(&p->cfg, j);
    sdi_json_key(j, "template");
    sdi_json_string(j, p->template_name);
    sdi_json_key(j, "macros");
    sdi_json_begin_object(j);
    for (int i = 0; i < p->nmacros; i++) {
        sdi_json_key(j, p->macro_name[i]);
        sdi_json_string(j, p->macro_value[i]);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "launches");
    sdi_json_begin_array(j);
    for (int i = 0; i < p->nlaunches; i++) {
        sdi_json_begin_object(j);
        sdi_json_key(j, "kernel");
        sdi_json_string(j, p->launch[i].kernel);
        sdi_json_key(j, "grid");
        sdi_json_int(j, p->launch[i].grid);
        sdi_json_key(j, "block");
        sdi_json_int(j, p->launch[i].block);
        if (p->launch[i].dyn_smem > 0) {
            sdi_json_key(j, "dyn_smem");
            sdi_json_int(j, p->launch[i].dyn_smem);
        }
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_key(j, "smem");
    sdi_json_int(j, p->smem);
    sdi_json_key(j, "m_value");
    sdi_json_int(j, p->m_value);
    sdi_json_key(j, "m_meta");
    sdi_json_int(j, p->m_meta);
    sdi_json_key(j, "workspace");
    sdi_json_int(j, p->workspace);
    sdi_json_key(j, "build_ms");
    sdi_json_number(j, p->build_ms);
    sdi_json_key(j, "format");
    sdi_format_json(&p->fmt, j);
    sdi_json_end_object(j);
}

/* ------------------------------------------------------------------ on a device */
void sdi_spmv_exec_free(sdi_spmv_exec *e)
{
    if (e == NULL)
        return;
    sdi_program_free(&e->prog);
    sdi_module_unload(&e->mod);
    memset(e, 0, sizeof *e);
}

sd_status sdi_spmv_exec_create(sd_context *ctx, const sdi_spmv_plan *p, sdi_spmv_exec *out)
{
#define SD_FREE_ALL sdi_spmv_exec_free(out)
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv exec: out is NULL");
    memset(out, 0, sizeof *out);
    out->x_buf = out->y_buf = -1;
    if (ctx == NULL || p == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv exec: context or plan is NULL");
    sdi_program_init(&out->prog);
    /* Compile (memoised) and load the kernels the launches name. */
    if (p->nlaunches > 0) {
        sdi_macro macros[SDI_SPMV_MAX_MACROS];
        sdi_jit_request req;
        sdi_spmv_plan_jit_request(p, ctx->arch[0] ? ctx->arch : NULL, macros, &req);
        const sdi_cubin *cub = NULL;
        bool hit = false;
        SD_TRY(sdi_jit_get(ctx, &req, &cub, &hit));
        out->cubin_hit = hit;
        out->compile_ms = hit ? 0 : cub->compile_ms;
        const char *names[SDI_SPMV_MAX_LAUNCHES];
        int nn = 0;
        for (int i = 0; i < p->nlaunches; i++) {
            int dup = 0;
            for (int k = 0; k < nn; k++)
                dup |= strcmp(names[k], p->launch[i].kernel) == 0;
            if (!dup)
                names[nn++] = p->launch[i].kernel;
        }
        SD_TRY(sdi_module_load(ctx, cub->cubin, cub->size, names, nn, &out->mod));
    }
    /* Upload the format: device arrays zero-filled, host elements copied over. */
    double t0 = sdi_now();
    for (int i = 0; i < p->fmt.n_arrays; i++) {
        const sdi_fmt_array *fa = &p->fmt.arr[i];
        if (fa->role == SDI_ROLE_HOST || fa->count == 0)
            continue;
        size_t bytes = (size_t)fa->count * (size_t)fa->elem_size;
        int idx = -1;
        SD_TRY(sdi_program_alloc_buffer(ctx, &out->prog, fa->name, bytes, &idx));
        if (fa->role != SDI_ROLE_WORKSPACE && fa->host_count > 0)
            SD_TRY(sdi_copy_to_device(ctx, out->prog.buffers[idx].dev, fa->data,
                                      (size_t)fa->host_count * (size_t)fa->elem_size, fa->name));
    }
    out->upload_ms = (sdi_now() - t0) * 1e3;
    SD_TRY(sdi_program_bind_buffer(&out->prog, "x", NULL, 0, &out->x_buf));
    SD_TRY(sdi_program_bind_buffer(&out->prog, "y", NULL, 0, &out->y_buf));
    for (int i = 0; i < p->nlaunches; i++) {
        const sdi_spmv_launch *l = &p->launch[i];
        sdi_function *fn = sdi_module_function(&out->mod, l->kernel);
        if (fn == NULL) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_INTERNAL, "spmv exec: kernel %s not loaded", l->kernel);
        }
        unsigned grid_x = l->grid;
        if (l->dyn_smem > 0)
            SD_TRY(sdi_function_reserve_smem(ctx, fn, (int)l->dyn_smem));
        SD_TRY(sdi_function_check_legal(ctx, fn, (int)l->block, l->dyn_smem));
        if (l->grid_stride) { /* no more CTAs than stay resident (registers count here) */
            int per_sm = 0;
            SD_TRY(sdi_function_resident_ctas(ctx, fn, (int)l->block, l->dyn_smem, &per_sm));
            const long long resident = (long long)per_sm * ctx->props.sm_count;
            if (resident >= 1 && resident < (long long)grid_x)
                grid_x = (unsigned)resident;
        }
        sdi_arg args[SDI_SPMV_MAX_ARGS];
        for (int k = 0; k < l->nargs; k++) {
            const sdi_spmv_arg *a = &l->args[k];
            memset(&args[k], 0, sizeof args[k]);
            switch (a->kind) {
            case SDI_SPMV_ARG_ARRAY: {
                int b = sdi_program_find_buffer(&out->prog, a->name);
                if (b < 0) {
                    SD_FREE_ALL;
                    return SDI_ERR(SD_ERR_INTERNAL, "spmv exec: %s argument %d: no buffer %s",
                                   l->kernel, k, a->name);
                }
                args[k] = sdi_arg_buffer(b);
                break;
            }
            case SDI_SPMV_ARG_X:
                args[k] = sdi_arg_buffer(out->x_buf);
                break;
            case SDI_SPMV_ARG_Y:
                args[k] = sdi_arg_buffer(out->y_buf);
                break;
            case SDI_SPMV_ARG_NULL:
                args[k].kind = SDI_ARG_PTR;
                args[k].buffer = -1;
                args[k].v.ptr = NULL;
                break;
            case SDI_SPMV_ARG_I32:
                args[k] = sdi_arg_i32((int32_t)a->v);
                break;
            default:
                args[k] = sdi_arg_i64(a->v);
                break;
            }
        }
        const unsigned grid[3] = {grid_x, 1, 1}, block[3] = {l->block, 1, 1};
        SD_TRY(sdi_program_add_launch(&out->prog, fn, grid, block, l->dyn_smem, args, l->nargs));
    }
    /* A graph issues in 1.3 us what a plain launch issues in 3.5 (runtime.h). */
    out->prog.use_graph = sdi_config_get()->graphs;
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_spmv_exec_bind(sdi_spmv_exec *e, const sdi_spmv_plan *p, const float *d_x,
                             float *d_y)
{
    if (e == NULL || p == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv bind: NULL exec or plan");
    sd_status s = sdi_program_bind_buffer(&e->prog, "x", (void *)d_x,
                                          (size_t)p->fmt.cols * sizeof(float), NULL);
    if (s == SD_OK)
        s = sdi_program_bind_buffer(&e->prog, "y", d_y, (size_t)p->fmt.rows * sizeof(float), NULL);
    return s;
}

sd_status sdi_spmv_exec_run(sd_context *ctx, sdi_spmv_exec *e, cudaStream_t stream)
{
    if (e == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "spmv run: exec is NULL");
    if (e->prog.nlaunches == 0)
        return SD_OK; /* no rows: nothing to compute */
    return sdi_program_run(ctx, &e->prog, stream);
}
