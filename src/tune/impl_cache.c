/* src/tune/impl_cache.c: an implementation to and from a kernel-cache entry (impl_cache.h). */
#include <stdio.h>
#include <string.h>

#include "../model/model_files.h"
#include "impl_cache.h"

#define SD_FREE_ALL ((void)0) /* nothing here owns memory across an SD_TRY */

static const char *kind_name(sdi_impl_kind k)
{
    switch (k) {
    case SDI_IMPL_SPMV: return "spmv";
    case SDI_IMPL_SPMM: return "spmm";
    case SDI_IMPL_VENDOR: return "vendor";
    case SDI_IMPL_SPGEMM: return "spgemm";
    default: return "none";
    }
}

void sdi_impl_record_json(const sdi_impl *im, int general_b, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "format");
    sdi_json_int(j, SDI_IMPL_RECORD_FORMAT);
    sdi_json_key(j, "kind");
    sdi_json_string(j, kind_name(im->kind));
    sdi_json_key(j, "op");
    sdi_json_string(j, sdi_op_name(im->op));
    sdi_json_key(j, "k");
    sdi_json_int(j, im->k);
    sdi_json_key(j, "config");
    switch (im->kind) {
    case SDI_IMPL_SPMV: sdi_spmv_config_json(&im->spmv_cfg, j); break;
    case SDI_IMPL_SPMM: sdi_spmm_config_json(&im->spmm_cfg, j); break;
    case SDI_IMPL_SPGEMM: sdi_spgemm_config_json(&im->spgemm_cfg, j); break;
    default: sdi_json_null(j); break;
    }
    sdi_json_key(j, "vendor");
    if (im->kind == SDI_IMPL_VENDOR)
        sdi_json_string(j, im->vendor_name);
    else
        sdi_json_null(j);
    sdi_json_key(j, "vendor_plain");
    sdi_json_bool(j, im->vendor_plain);
    sdi_json_key(j, "aat");
    sdi_json_int(j, im->sg_aat);
    sdi_json_key(j, "general_b");
    sdi_json_bool(j, general_b != 0);
    sdi_json_end_object(j);
}

sd_status sdi_impl_record_read(const sdi_jvalue *v, sdi_impl *out, int *general_b)
{
    memset(out, 0, sizeof *out);
    *general_b = 0;
    if (v == NULL || v->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "implementation record: not a JSON object");
    const double format = sdi_jget_number(v, "format", -1);
    if (format != SDI_IMPL_RECORD_FORMAT)
        return SDI_ERR(SD_ERR_PARSE, "implementation record: format %g, this library reads %d", format,
                       SDI_IMPL_RECORD_FORMAT);
    const char *kind = sdi_jget_string(v, "kind", ""), *op = sdi_jget_string(v, "op", "");
    for (int k = SDI_IMPL_SPMV; k <= SDI_IMPL_SPGEMM; k++)
        if (strcmp(kind, kind_name((sdi_impl_kind)k)) == 0)
            out->kind = (sdi_impl_kind)k;
    if (out->kind == SDI_IMPL_NONE)
        return SDI_ERR(SD_ERR_PARSE, "implementation record: unknown kind '%s'", kind);
    const int opv = sdi_op_from_name(op);
    if (opv < 0)
        return SDI_ERR(SD_ERR_PARSE, "implementation record: unknown operator '%s'", op);
    out->op = (sd_op)opv;
    const double k = sdi_jget_number(v, "k", -1);
    if (k != (double)(int)k || k < 0)
        return SDI_ERR(SD_ERR_PARSE, "implementation record: bad K");
    out->k = (int)k;
    const sdi_jvalue *cfg = sdi_jget(v, "config");
    sd_status s = SD_OK;
    if (out->kind == SDI_IMPL_SPMV)
        s = sdi_spmv_config_from_json(cfg, &out->spmv_cfg);
    else if (out->kind == SDI_IMPL_SPMM)
        s = sdi_spmm_config_from_json(cfg, &out->spmm_cfg);
    else if (out->kind == SDI_IMPL_SPGEMM)
        s = sdi_spgemm_config_from_json(cfg, &out->spgemm_cfg);
    else {
        const char *name = sdi_jget_string(v, "vendor", NULL);
        if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof out->vendor_name)
            return SDI_ERR(SD_ERR_PARSE, "implementation record: no cuSPARSE variant");
        snprintf(out->vendor_name, sizeof out->vendor_name, "%s", name);
    }
    if (s != SD_OK) {
        sdi_error_prefix("implementation record");
        return s;
    }
    const sdi_jvalue *plain = sdi_jget(v, "vendor_plain"), *gb = sdi_jget(v, "general_b");
    out->vendor_plain = plain != NULL && plain->type == SDI_JBOOL && plain->boolean;
    *general_b = gb != NULL && gb->type == SDI_JBOOL && gb->boolean;
    const double aat = sdi_jget_number(v, "aat", -1);
    if (aat != 0 && aat != 1)
        return SDI_ERR(SD_ERR_PARSE, "implementation record: bad aat");
    out->sg_aat = (int)aat;
    return SD_OK;
}

/* ------------------------------------------------------------------ blobs */
#define SG_BLOB_UNITS "sg_units"

static const sdi_cache_blob *find_blob(const sdi_cache_entry *e, const char *name)
{
    for (int i = 0; i < e->nblobs; i++)
        if (strcmp(e->blobs[i].name, name) == 0)
            return &e->blobs[i];
    return NULL;
}

/* The cubin of req as the blob `name` in *b: 1, or 0 (error cleared) when it cannot be had. */
static int cubin_blob(sd_context *ctx, const sdi_jit_request *req, const char *name, sdi_cache_blob *b)
{
    const sdi_cubin *cub = NULL;
    if (sdi_jit_get(ctx, req, &cub, NULL) != SD_OK) {
        sdi_error_clear();
        return 0;
    }
    snprintf(b->name, sizeof b->name, "%s", name);
    b->data = cub->cubin;
    b->size = cub->size;
    return 1;
}

/* A SpGEMM implementation's units and scan after out->blobs[0 .. n): all units or none. */
static void spgemm_blobs(sd_context *ctx, const sdi_impl *im, sdi_impl_blobs *out)
{
    const sdi_sg_lowered *low = &im->sg_low;
    const int n0 = out->n;
    int n = n0;
    if (n + 2 * low->nunits + 2 > SDI_IMPL_MAX_BLOBS)
        return;
    for (int u = 0; u < low->nunits; u++) {
        sdi_jit_request req;
        char name[32];
        sdi_spgemm_unit_request(low, u, &req);
        snprintf(name, sizeof name, "sg_cubin_%d", u);
        if (!cubin_blob(ctx, &req, name, &out->blobs[n + 1])) {
            memset(&out->blobs[n0], 0, (size_t)(n + 2 - n0) * sizeof out->blobs[0]);
            return;
        }
        snprintf(out->blobs[n].name, sizeof out->blobs[n].name, "sg_src_%d", u);
        out->blobs[n].data = low->units[u].source;
        out->blobs[n].size = strlen(low->units[u].source) + 1;
        n += 2;
    }
    out->sg_units = low->nunits;
    snprintf(out->blobs[n].name, sizeof out->blobs[n].name, SG_BLOB_UNITS);
    out->blobs[n].data = &out->sg_units;
    out->blobs[n].size = sizeof out->sg_units;
    n++;
    sdi_jit_request req;
    sdi_spgemm_scan_request(&req);
    n += cubin_blob(ctx, &req, "cubin_scan", &out->blobs[n]);
    out->n = n;
}

void sdi_impl_entry_blobs(sd_context *ctx, sdi_impl *im, sdi_impl_blobs *out)
{
    memset(out, 0, sizeof *out);
    if (im->kind == SDI_IMPL_SPGEMM) {
        spgemm_blobs(ctx, im, out);
        sdi_jit_request req;
        sdi_spgemm_prep_request(&req);
        out->n += cubin_blob(ctx, &req, "cubin_prep", &out->blobs[out->n]);
    } else if (im->kind == SDI_IMPL_SPMV || im->kind == SDI_IMPL_SPMM) {
        sdi_macro macros[SDI_SPMM_MAX_MACROS > SDI_SPMV_MAX_MACROS ? SDI_SPMM_MAX_MACROS : SDI_SPMV_MAX_MACROS];
        sdi_jit_request req;
        if (sdi_impl_jit_request(im, ctx, macros, &req) == SD_OK)
            out->n += cubin_blob(ctx, &req, "cubin", &out->blobs[out->n]);
    }
    sdi_error_clear();
}

/* Seeds the memo with a SpGEMM entry's units and scan as they are (no schedule needed: that
 * needs the device operands). False when the entry lacks a unit. */
static bool seed_spgemm_units(sd_context *ctx, const sdi_cache_entry *e, int fast)
{
    const sdi_cache_blob *nb = find_blob(e, SG_BLOB_UNITS);
    int32_t n = 0;
    if (nb == NULL || nb->size != sizeof n)
        return false;
    memcpy(&n, nb->data, sizeof n);
    if (n < 0 || n > SDI_SG_MAX_LAUNCHES)
        return false;
    for (int32_t u = 0; u < n; u++) {
        char name[64];
        snprintf(name, sizeof name, "sg_src_%d", u);
        const sdi_cache_blob *src = find_blob(e, name);
        snprintf(name, sizeof name, "sg_cubin_%d", u);
        const sdi_cache_blob *bin = find_blob(e, name);
        if (src == NULL || bin == NULL || src->size == 0 || strnlen(src->data, src->size) != src->size - 1)
            return false;
        sdi_jit_request req;
        memset(&req, 0, sizeof req);
        req.source = src->data;
        req.kernel_name = "a cached SpGEMM unit";
        req.fast = fast; /* the level the units were compiled at: part of the memo key */
        req.link = sdi_config_get()->sg_link; /* linked units are keyed apart (jit.c) */
        if (sdi_jit_memo_put(ctx, &req, bin->data, bin->size) != SD_OK)
            sdi_error_clear(); /* compiled again if needed */
    }
    const sdi_cache_blob *scan = find_blob(e, "cubin_scan");
    if (scan != NULL) {
        sdi_jit_request req;
        sdi_spgemm_scan_request(&req);
        if (sdi_jit_memo_put(ctx, &req, scan->data, scan->size) != SD_OK)
            sdi_error_clear();
    }
    return true;
}

/* The record inside the entry's plan JSON ("impl"). */
static sd_status read_record(const sdi_cache_entry *e, sdi_impl *im, int *general_b)
{
    if (e->plan_json == NULL)
        return SDI_ERR(SD_ERR_PARSE, "entry without a plan");
    sdi_jvalue plan;
    SD_TRY(sdi_json_parse(e->plan_json, -1, &plan));
    sd_status s = sdi_impl_record_read(sdi_jget(&plan, "impl"), im, general_b);
    sdi_jvalue_free(&plan);
    return s;
}

sd_status sdi_impl_from_entry(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                              const sdi_cache_entry *e, sdi_impl *im, bool *used)
{
    *used = false;
    int general_b = 0;
    if (read_record(e, im, &general_b) != SD_OK) {
        sdi_log(1, "cache: entry without a usable implementation record (%s): rebuilding", sd_last_error());
        sdi_error_clear();
        memset(im, 0, sizeof *im);
        return SD_OK;
    }
    if (im->op != op || general_b != (b != NULL)) {
        sdi_log(1, "cache: entry for another operator or product: rebuilding");
        memset(im, 0, sizeof *im);
        return SD_OK;
    }
    im->sg_b = b;
    const sdi_cache_blob *cubin = find_blob(e, "cubin"), *prep = find_blob(e, "cubin_prep");
    if (prep != NULL) {
        /* The operand preparation module: seeded so that a hit runs no NVRTC at all. */
        sdi_jit_request req;
        sdi_spgemm_prep_request(&req);
        if (sdi_jit_memo_put(ctx, &req, prep->data, prep->size) != SD_OK)
            sdi_error_clear();
    }
    if (im->kind == SDI_IMPL_SPGEMM && !seed_spgemm_units(ctx, e, im->spgemm_cfg.fast_compile)) {
        sdi_log(1, "cache: SpGEMM entry without its launch units: rebuilding");
        memset(im, 0, sizeof *im);
        return SD_OK;
    }
    const bool seed = cubin != NULL && im->kind != SDI_IMPL_SPGEMM;
    sd_status s = sdi_impl_build(ctx, a, im, seed ? cubin->data : NULL, seed ? cubin->size : 0);
    if (s != SD_OK) {
        memset(im, 0, sizeof *im);
        if (ctx->broken)
            return s;
        sdi_log(1, "cache: entry could not be rebuilt (%s): searching again", sd_last_error());
        sdi_error_clear();
        return SD_OK;
    }
    *used = true;
    return SD_OK;
}
