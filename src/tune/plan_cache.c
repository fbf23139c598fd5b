/* src/tune/plan_cache.c: a search's winner to and from a kernel-cache entry
 * (plan_cache.h). */
#include <stdio.h>
#include <string.h>

#include "../model/model_files.h"
#include "../runtime/memo.h"
#include "plan_cache.h"

#define SD_FREE_ALL ((void)0) /* nothing here owns memory across an SD_TRY */

static const char *const kind_names[] = {"none", "plan", "vendor", "agent"};

void sdi_plan_record_json(const sdi_candidate *c, int general_b, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "format");
    sdi_json_int(j, SDI_PLAN_RECORD_FORMAT);
    sdi_json_key(j, "kind");
    sdi_json_string(j, c->kind >= SDI_CAND_NONE && c->kind <= SDI_CAND_AGENT ? kind_names[c->kind] : "none");
    sdi_json_key(j, "op");
    sdi_json_string(j, sdi_op_name((sd_op)c->op));
    sdi_json_key(j, "k");
    sdi_json_int(j, c->k);
    sdi_json_key(j, "plan");
    if (c->kind == SDI_CAND_PLAN)
        sdi_plan_json(&c->plan, j);
    else
        sdi_json_null(j);
    sdi_json_key(j, "vendor");
    if (c->kind == SDI_CAND_VENDOR)
        sdi_json_string(j, c->vendor_name);
    else
        sdi_json_null(j);
    sdi_json_key(j, "vendor_plain");
    sdi_json_bool(j, c->vendor_plain);
    /* An agent kernel is never rebuilt from a built-in entry (only a kernel that validated
     * in a worker is loaded: the agent round's own entry); its model says what it is. */
    sdi_json_key(j, "agent_model");
    if (c->kind == SDI_CAND_AGENT)
        sdi_json_string(j, c->agent_model);
    else
        sdi_json_null(j);
    sdi_json_key(j, "aat");
    sdi_json_int(j, c->op == SD_OP_SPGEMM && c->sg_aat == 1 ? 1 : 0);
    sdi_json_key(j, "general_b");
    sdi_json_bool(j, general_b != 0);
    sdi_json_end_object(j);
}

sd_status sdi_plan_record_read(const sdi_jvalue *v, sdi_candidate *out, int *general_b)
{
    memset(out, 0, sizeof *out);
    *general_b = 0;
    if (v == NULL || v->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "plan record: not a JSON object");
    const double format = sdi_jget_number(v, "format", -1);
    if (format != SDI_PLAN_RECORD_FORMAT)
        return SDI_ERR(SD_ERR_PARSE, "plan record: format %g, this library reads %d", format,
                       SDI_PLAN_RECORD_FORMAT);
    const char *kind = sdi_jget_string(v, "kind", ""), *op = sdi_jget_string(v, "op", "");
    for (int k = SDI_CAND_PLAN; k <= SDI_CAND_AGENT; k++)
        if (strcmp(kind, kind_names[k]) == 0)
            out->kind = k;
    if (out->kind == SDI_CAND_NONE)
        return SDI_ERR(SD_ERR_PARSE, "plan record: unknown kind '%s'", kind);
    const int opv = sdi_op_from_name(op);
    if (opv < 0)
        return SDI_ERR(SD_ERR_PARSE, "plan record: unknown operator '%s'", op);
    out->op = opv;
    const double k = sdi_jget_number(v, "k", -1);
    if (k != (double)(int)k || k < 0)
        return SDI_ERR(SD_ERR_PARSE, "plan record: bad K");
    out->k = (int)k;
    if (out->kind == SDI_CAND_PLAN) {
        sd_status s = sdi_plan_from_json(sdi_jget(v, "plan"), &out->plan);
        if (s != SD_OK) {
            sdi_error_prefix("plan record");
            return s;
        }
        if (out->plan.op != out->op || (out->op == SD_OP_SPMM && out->plan.k != out->k))
            return SDI_ERR(SD_ERR_PARSE, "plan record: the plan is for another operator or K");
    } else if (out->kind == SDI_CAND_VENDOR) {
        const char *name = sdi_jget_string(v, "vendor", NULL);
        if (name == NULL || name[0] == '\0' || strlen(name) >= sizeof out->vendor_name)
            return SDI_ERR(SD_ERR_PARSE, "plan record: no cuSPARSE variant");
        snprintf(out->vendor_name, sizeof out->vendor_name, "%s", name);
    } else {
        const char *model = sdi_jget_string(v, "agent_model", "");
        snprintf(out->agent_model, sizeof out->agent_model, "%s", model);
    }
    const sdi_jvalue *plain = sdi_jget(v, "vendor_plain"), *gb = sdi_jget(v, "general_b");
    out->vendor_plain = plain != NULL && plain->type == SDI_JBOOL && plain->boolean;
    *general_b = gb != NULL && gb->type == SDI_JBOOL && gb->boolean;
    const double aat = sdi_jget_number(v, "aat", -1);
    if (aat != 0 && aat != 1)
        return SDI_ERR(SD_ERR_PARSE, "plan record: bad aat");
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

/* A SpGEMM program's units and scan after out->blobs[0 .. n): all units or none. The
 * units are those the executable was compiled from (its lowering keeps them). */
static void spgemm_blobs(sd_context *ctx, const sdi_candidate *c, sdi_plan_blobs *out)
{
    const sdi_sg_lowered *low = &c->exe.low.sg_units;
    const int n0 = out->n;
    int n = n0;
    if (n + 2 * low->nunits + 2 > SDI_PLAN_MAX_BLOBS)
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

void sdi_plan_entry_blobs(sd_context *ctx, const sdi_candidate *c, sdi_plan_blobs *out)
{
    memset(out, 0, sizeof *out);
    if (!c->built || c->kind != SDI_CAND_PLAN)
        return;
    if (c->exe.kind == SDI_EXE_SPGEMM) {
        spgemm_blobs(ctx, c, out);
        sdi_jit_request req;
        sdi_spgemm_prep_request(&req);
        out->n += cubin_blob(ctx, &req, "cubin_prep", &out->blobs[out->n]);
    } else if (c->exe.kind == SDI_EXE_PROGRAM) {
        /* The request the executable was compiled from. */
        sdi_macro macros[SDI_LOW_MAX_MACROS];
        sdi_jit_request req;
        if (sdi_lowered_jit_request(&c->exe.low, sdi_exe_arch(ctx, c->op), macros, &req) == SD_OK)
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

/* The record inside the entry's plan JSON ("record"; an entry of format 1 has "impl"
 * instead, and reads as no record). */
static sd_status read_record(const sdi_cache_entry *e, sdi_candidate *c, int *general_b)
{
    if (e->plan_json == NULL)
        return SDI_ERR(SD_ERR_PARSE, "entry without a plan");
    sdi_jvalue plan;
    SD_TRY(sdi_json_parse(e->plan_json, -1, &plan));
    sd_status s = sdi_plan_record_read(sdi_jget(&plan, "record"), c, general_b);
    sdi_jvalue_free(&plan);
    return s;
}

/* A search follows: c emptied, the cause logged. */
static sd_status not_used(sdi_candidate *c, const char *why)
{
    sdi_log(1, "cache: %s", why);
    sdi_error_clear();
    memset(c, 0, sizeof *c);
    return SD_OK;
}

sd_status sdi_plan_from_entry(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                              const sdi_cache_entry *e, sdi_candidate *c, bool *used)
{
    *used = false;
    int general_b = 0;
    char why[400];
    if (read_record(e, c, &general_b) != SD_OK) {
        snprintf(why, sizeof why, "entry without a usable plan record (%s): rebuilding", sd_last_error());
        return not_used(c, why);
    }
    if (c->kind == SDI_CAND_AGENT)
        return not_used(c, "an agent kernel's record in a built-in entry: rebuilding");
    if (c->op != (int32_t)op || general_b != (b != NULL))
        return not_used(c, "entry for another operator or product: rebuilding");
    c->sg_b = b;
    const sdi_cache_blob *cubin = find_blob(e, "cubin"), *prep = find_blob(e, "cubin_prep");
    if (prep != NULL) {
        /* The operand preparation module: seeded so that a hit runs no NVRTC at all. */
        sdi_jit_request req;
        sdi_spgemm_prep_request(&req);
        if (sdi_jit_memo_put(ctx, &req, prep->data, prep->size) != SD_OK)
            sdi_error_clear();
    }
    const bool sg_plan = c->kind == SDI_CAND_PLAN && op == SD_OP_SPGEMM;
    if (sg_plan && !seed_spgemm_units(ctx, e, c->plan.p.spgemm.fast_compile))
        return not_used(c, "SpGEMM entry without its launch units: rebuilding");
    /* The family's statistics (and, for SpGEMM, the device operands and the rows of C)
     * are made by the build, which keeps the operands with the executable. */
    const sdi_task task = {.op = c->op, .k = op == SD_OP_SPMM ? c->k : 1, .a = a, .gpu = &ctx->props};
    const bool seed = cubin != NULL && op != SD_OP_SPGEMM;
    sd_status s = sdi_candidate_build(ctx, &task, c, seed ? cubin->data : NULL, seed ? cubin->size : 0);
    if (s != SD_OK) {
        memset(c, 0, sizeof *c);
        if (ctx->broken)
            return s;
        snprintf(why, sizeof why, "entry could not be rebuilt (%s): searching again", sd_last_error());
        return not_used(c, why);
    }
    *used = true;
    return SD_OK;
}
