/* src/vendor/baseline.c: the cuSPARSE baseline driver: the context's cuSPARSE
 * handle, the device copy of A shared by every variant, the CPU reference, variant
 * bookkeeping (statuses, validation, roofline), the choice of the fastest valid variant
 * and its JSON form. The variants live in baseline_dense.c and spgemm.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/context.h"
#include "../runtime/device_memory.h"
#include "baseline_internal.h"

/* ------------------------------------------------------------------ bookkeeping */

const char *sdi_variant_status_name(sdi_variant_status s)
{
    switch (s) {
    case SDI_VARIANT_OK: return "ok";
    case SDI_VARIANT_UNSUPPORTED: return "unsupported";
    case SDI_VARIANT_OUT_OF_RESOURCES: return "out_of_resources";
    case SDI_VARIANT_INVALID: return "invalid";
    case SDI_VARIANT_SKIPPED: return "skipped";
    case SDI_VARIANT_ERROR: return "error";
    }
    return "unknown";
}

/* True when `name` is an element of the comma-separated list. */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return false;
}

sdi_variant_result *sdi_bl_begin(sdi_bl_state *bl, const char *name)
{
    if (bl->opt != NULL && bl->opt->only != NULL && bl->opt->only[0] != '\0' &&
        !in_list(bl->opt->only, name))
        return NULL;
    sdi_baseline *b = bl->out;
    if (b->nvariants >= SDI_BASELINE_MAX_VARIANTS) {
        sdi_log(0, "cuSPARSE baseline: variant table full, '%s' left out (a bug)", name);
        return NULL;
    }
    sdi_variant_result *v = &b->v[b->nvariants++];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->status = SDI_VARIANT_ERROR;
    v->val.row = v->val.col = -1;
    sdi_log(2, "cuSPARSE baseline: %s", name);
    return v;
}

void sdi_bl_cusparse_failed(sdi_variant_result *v, const char *call, cusparseStatus_t st)
{
    switch (st) {
    case CUSPARSE_STATUS_NOT_SUPPORTED:
    case CUSPARSE_STATUS_ARCH_MISMATCH:
    case CUSPARSE_STATUS_INVALID_VALUE:
        v->status = SDI_VARIANT_UNSUPPORTED;
        break;
    case CUSPARSE_STATUS_ALLOC_FAILED:
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES:
        v->status = SDI_VARIANT_OUT_OF_RESOURCES;
        break;
    default:
        v->status = SDI_VARIANT_ERROR;
        break;
    }
    snprintf(v->detail, sizeof v->detail, "%s: %s (%s)", call, cusparseGetErrorName(st),
             cusparseGetErrorString(st));
}

sd_status sdi_bl_failed(sdi_bl_state *bl, sdi_variant_result *v, sd_status s)
{
    snprintf(v->detail, sizeof v->detail, "%s", sd_last_error());
    switch (s) {
    case SD_ERR_VALIDATION: v->status = SDI_VARIANT_INVALID; break;
    case SD_ERR_OUT_OF_MEMORY: v->status = SDI_VARIANT_OUT_OF_RESOURCES; break;
    case SD_ERR_UNSUPPORTED: v->status = SDI_VARIANT_UNSUPPORTED; break;
    default: v->status = SDI_VARIANT_ERROR; break;
    }
    /* A sticky CUDA error ends the baseline: nothing more can run in this process. */
    if (atomic_load(&bl->ctx->broken))
        return SDI_ERR(SD_ERR_CUDA, "cuSPARSE variant '%s': %s", v->name, v->detail);
    return SD_OK;
}

void sdi_bl_measured(sdi_bl_state *bl, sdi_variant_result *v, const sdi_timing *t)
{
    v->status = SDI_VARIANT_OK;
    v->timing = *t;
    v->detail[0] = '\0';
    if (bl->out->roofline_us > 0 && t->mean_us > 0)
        v->roofline_frac = bl->out->roofline_us / t->mean_us;
}

sdi_variant_result *sdi_bl_brief_fastest(sdi_bl_state *bl, int first)
{
    sdi_variant_result *best = NULL;
    for (int i = first; i < bl->out->nvariants; i++) {
        sdi_variant_result *v = &bl->out->v[i];
        if (v->status == SDI_VARIANT_OK &&
            (best == NULL || v->timing.mean_us < best->timing.mean_us))
            best = v;
    }
    return best != NULL && best->brief ? best : NULL;
}

sd_status sdi_bl_poison(sdi_bl_state *bl, void *d, size_t bytes)
{
    if (d == NULL || bytes == 0)
        return SD_OK;
    return sdi_cuda_status(bl->ctx, cudaMemsetAsync(d, 0x7f, bytes, bl->ctx->stream),
                           "poisoning the output", NULL);
}

/* ------------------------------------------------------------------ driver */

static void bl_free(sdi_bl_state *bl)
{
    sdi_cs_matrix_free(&bl->dev);
    sdi_reference_free(&bl->own_ref);
}

static const char *op_name(sd_op op)
{
    switch (op) {
    case SD_OP_SPMV: return "spmv";
    case SD_OP_SPMM: return "spmm";
    case SD_OP_SPGEMM: return "spgemm";
    }
    return "unknown";
}

sd_status sdi_cusparse_baseline(sd_context *ctx, const sd_csr *a, sd_op op, const float *xb,
                                const sdi_baseline_options *opt, sdi_baseline *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_cusparse_baseline: out is NULL");
    memset(out, 0, sizeof *out);
    out->best = -1;
    if (a == NULL || (op != SD_OP_SPGEMM && xb == NULL))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_cusparse_baseline: A or the dense operand is "
                       "NULL");
    if (op != SD_OP_SPMV && op != SD_OP_SPMM && op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_cusparse_baseline: unknown operator %d", op);
    sdi_baseline_options defaults = {.k = 32, .aat = -1};
    if (opt == NULL)
        opt = &defaults;
    if (op == SD_OP_SPMM && (opt->k < 1 || opt->k > 65536))
        return SDI_ERR(SD_ERR_INVALID_ARG, "SpMM needs 1 <= K <= 65536 (got %d)", opt->k);
    sd_status s = sdi_cs_check_input(ctx, a, "the cuSPARSE baseline");
    if (s != SD_OK)
        return s;
    out->op = op;
    out->k = op == SD_OP_SPMM ? opt->k : (op == SD_OP_SPMV ? 1 : 0);
    out->rows = a->rows;
    out->cols = a->cols;
    out->nnz = a->nnz;
    if (opt->ref != NULL &&
        (opt->ref->op != op || opt->ref->rows != a->rows ||
         (op != SD_OP_SPGEMM && (opt->ref->k != out->k || opt->ref->exact != opt->exact))))
        return SDI_ERR(SD_ERR_INVALID_ARG, "sdi_cusparse_baseline: the caller's reference is "
                       "for another task (%lld rows, K %d; this task: %d rows, K %d)",
                       (long long)opt->ref->rows, opt->ref->k, a->rows, out->k);
    if (op == SD_OP_SPGEMM && opt->b != NULL) {
        if (opt->b->rows != a->cols)
            return SDI_ERR(SD_ERR_INVALID_ARG, "A·B: A is %dx%d and B is %dx%d", a->rows,
                           a->cols, opt->b->rows, opt->b->cols);
        s = sdi_csr_check_structure(opt->b);
        if (s != SD_OK)
            return s;
        out->general_b = 1;
    } else if (op == SD_OP_SPGEMM) {
        out->aat = opt->aat >= 0 ? opt->aat : (a->rows != a->cols);
        if (!out->aat && a->rows != a->cols)
            return SDI_ERR(SD_ERR_INVALID_ARG, "A·A needs a square A (A is %dx%d); use A·Aᵀ",
                           a->rows, a->cols);
    }
    sdi_bl_state bl;
    memset(&bl, 0, sizeof bl);
    sd_csr at;
    memset(&at, 0, sizeof at);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        bl_free(&bl);                                                                      \
        sd_csr_free(&at);                                                                  \
    } while (0)
    bl.ctx = ctx;
    bl.a = a;
    bl.opt = opt;
    bl.out = out;
    bl.ref = opt->ref != NULL ? opt->ref : &bl.own_ref;
    SD_TRY(sdi_device_calibrate(ctx));
    out->copy_bw = ctx->copy_bw;
    out->launch_us = ctx->launch_us_mean;
    out->roofline_bytes = sdi_roofline_bytes(op, a->rows, a->cols, a->nnz, out->k);
    out->roofline_us = out->roofline_bytes > 0 ? 1e6 * out->roofline_bytes / ctx->copy_bw : 0;
    SD_TRY(sdi_cusparse_handle(ctx, &bl.h));
    double t0 = sdi_now();
    if (op == SD_OP_SPGEMM) {
        const sd_csr *b = opt->b != NULL ? opt->b : a;
        if (opt->b == NULL && out->aat) {
            SD_TRY(sdi_csr_transpose(a, &at));
            b = &at;
        }
        if (opt->ref == NULL)
            SD_TRY(sdi_reference_spgemm(a, b, &bl.own_ref));
        out->nnz_c = bl.ref->c.nnz;
        SD_TRY(sdi_cs_build_csr(ctx, a, true, false, "A", &bl.dev));
        sdi_log(1, "cuSPARSE baseline: reference and upload %.1f ms", (sdi_now() - t0) * 1e3);
        SD_TRY(sdi_bl_spgemm(&bl, b));
    } else {
        if (opt->ref == NULL)
            SD_TRY(sdi_reference_dense(a, op, xb, out->k, opt->exact, &bl.own_ref));
        SD_TRY(sdi_cs_build_csr(ctx, a, true, true, "A", &bl.dev));
        sdi_log(1, "cuSPARSE baseline: reference and upload %.1f ms", (sdi_now() - t0) * 1e3);
        if (op == SD_OP_SPMV)
            SD_TRY(sdi_bl_spmv(&bl, xb));
        else
            SD_TRY(sdi_bl_spmm(&bl, xb, out->k));
    }
    for (int i = 0; i < out->nvariants; i++)
        if (out->v[i].status == SDI_VARIANT_OK &&
            (out->best < 0 || out->v[i].timing.mean_us < out->v[out->best].timing.mean_us))
            out->best = i;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ JSON */

void sdi_baseline_json(const sdi_baseline *b, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "op");
    sdi_json_string(j, op_name(b->op));
    if (b->op == SD_OP_SPMM) {
        sdi_json_key(j, "k");
        sdi_json_int(j, b->k);
    }
    if (b->op == SD_OP_SPGEMM) {
        sdi_json_key(j, "product");
        sdi_json_string(j, b->general_b ? "A*B" : b->aat ? "A*At" : "A*A");
        sdi_json_key(j, "nnz_c");
        sdi_json_int(j, b->nnz_c);
    }
    sdi_json_key(j, "rows");
    sdi_json_int(j, b->rows);
    sdi_json_key(j, "cols");
    sdi_json_int(j, b->cols);
    sdi_json_key(j, "nnz");
    sdi_json_int(j, b->nnz);
    sdi_json_key(j, "copy_bandwidth_gbs");
    sdi_json_number(j, b->copy_bw * 1e-9);
    sdi_json_key(j, "empty_launch_us");
    sdi_json_number(j, b->launch_us);
    sdi_json_key(j, "roofline_bytes");
    if (b->roofline_bytes > 0)
        sdi_json_number(j, b->roofline_bytes);
    else
        sdi_json_null(j);
    sdi_json_key(j, "roofline_us");
    if (b->roofline_us > 0)
        sdi_json_number(j, b->roofline_us);
    else
        sdi_json_null(j);
    sdi_json_key(j, "variants");
    sdi_json_begin_array(j);
    for (int i = 0; i < b->nvariants; i++) {
        const sdi_variant_result *v = &b->v[i];
        bool ok = v->status == SDI_VARIANT_OK;
        sdi_json_begin_object(j);
        sdi_json_key(j, "name");
        sdi_json_string(j, v->name);
        sdi_json_key(j, "status");
        sdi_json_string(j, sdi_variant_status_name(v->status));
        sdi_json_key(j, "detail");
        sdi_json_string(j, v->detail);
        sdi_json_key(j, "mean_us");
        if (ok) sdi_json_number(j, v->timing.mean_us); else sdi_json_null(j);
        sdi_json_key(j, "min_us");
        if (ok) sdi_json_number(j, v->timing.min_us); else sdi_json_null(j);
        sdi_json_key(j, "median_us");
        if (ok) sdi_json_number(j, v->timing.median_us); else sdi_json_null(j);
        sdi_json_key(j, "pipelined_us");
        if (ok) sdi_json_number(j, v->timing.pipelined_us); else sdi_json_null(j);
        sdi_json_key(j, "setup_ms");
        sdi_json_number(j, v->setup_ms);
        if (ok && v->brief) {
            sdi_json_key(j, "brief");
            sdi_json_bool(j, true);
        }
        sdi_json_key(j, "valid");
        if (ok || v->status == SDI_VARIANT_INVALID) sdi_json_bool(j, ok); else sdi_json_null(j);
        sdi_json_key(j, "checked");
        sdi_json_int(j, v->val.n_checked);
        sdi_json_key(j, "worst_error_ratio");
        if (v->val.n_checked > 0) sdi_json_number(j, v->val.ratio); else sdi_json_null(j);
        sdi_json_key(j, "roofline_frac");
        if (ok && v->roofline_frac > 0) sdi_json_number(j, v->roofline_frac); else sdi_json_null(j);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_key(j, "best");
    if (b->best >= 0) {
        sdi_json_string(j, b->v[b->best].name);
        sdi_json_key(j, "best_mean_us");
        sdi_json_number(j, b->v[b->best].timing.mean_us);
    } else {
        sdi_json_null(j);
    }
    sdi_json_end_object(j);
}
