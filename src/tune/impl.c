/* src/tune/impl.c: build, run and refresh one implementation (ours or cuSPARSE's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "impl.h"

void sdi_impl_family(const sdi_impl *im, char *buf, size_t cap)
{
    switch (im->kind) {
    case SDI_IMPL_SPMV: snprintf(buf, cap, "spmv.%s", sdi_spmv_family_name(im->spmv_cfg.family)); break;
    case SDI_IMPL_SPMM: snprintf(buf, cap, "spmm.%s", sdi_spmm_template_name(im->spmm_cfg.tmpl)); break;
    case SDI_IMPL_VENDOR: snprintf(buf, cap, "cusparse.%s", im->vendor_name); break;
    case SDI_IMPL_SPGEMM: snprintf(buf, cap, "spgemm.%s", sdi_spgemm_family_name(im->spgemm_cfg.family)); break;
    case SDI_IMPL_AGENT: snprintf(buf, cap, "agent"); break;
    default: snprintf(buf, cap, "none"); break;
    }
}

_Static_assert(SDI_IMPL_CONFIG_TEXT >= SDI_SPMM_CONFIG_TEXT &&
                   SDI_IMPL_CONFIG_TEXT >= SDI_SPGEMM_CONFIG_TEXT &&
                   SDI_IMPL_CONFIG_TEXT >= sizeof "cusparse " + sizeof(((sdi_impl *)0)->vendor_name) &&
                   SDI_IMPL_CONFIG_TEXT >=
                       sizeof "agent kernel (model )" + sizeof(((sdi_impl *)0)->agent_model),
               "SDI_IMPL_CONFIG_TEXT is shorter than a configuration's text");

void sdi_impl_describe(const sdi_impl *im, char *buf, size_t cap)
{
    switch (im->kind) {
    case SDI_IMPL_SPMV: sdi_spmv_config_describe(&im->spmv_cfg, buf, cap); break;
    case SDI_IMPL_SPMM: sdi_spmm_config_describe(&im->spmm_cfg, buf, cap); break;
    case SDI_IMPL_VENDOR: snprintf(buf, cap, "cusparse %s", im->vendor_name); break;
    case SDI_IMPL_SPGEMM: sdi_spgemm_config_describe(&im->spgemm_cfg, buf, cap); break;
    case SDI_IMPL_AGENT:
        snprintf(buf, cap, "agent kernel (model %s)", im->agent_model[0] ? im->agent_model : "?");
        break;
    default: snprintf(buf, cap, "none"); break;
    }
}

static bool one_of(int v, int a, int b, int c)
{
    return v == a || v == b || v == c;
}

bool sdi_impl_vo_label(const sdi_impl *im, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (im->kind == SDI_IMPL_SPMV) {
        const sdi_spmv_config *c = &im->spmv_cfg;
        switch (c->family) {
        case SDI_SPMV_CSR_VEC:
            if (c->colc)
                return false; /* 16-bit column deltas: index compression */
            snprintf(buf, cap, "csr");
            return true;
        case SDI_SPMV_COO: snprintf(buf, cap, "coo"); return true;
        case SDI_SPMV_SELL:
            if (!one_of(c->c, 16, 32, 512))
                return false;
            snprintf(buf, cap, "sell%d", c->c);
            return true;
        case SDI_SPMV_BSR:
            if (!one_of(c->b, 4, 8, 16))
                return false;
            snprintf(buf, cap, "bsr%d", c->b);
            return true;
        case SDI_SPMV_TILES16: snprintf(buf, cap, "tiles16"); return true;
        default: return false; /* adaptive bins, merge path, tiny, ELL, DIA */
        }
    }
    if (im->kind == SDI_IMPL_SPMM) {
        const sdi_spmm_config *c = &im->spmm_cfg;
        switch (c->tmpl) {
        case SDI_SPMM_CSR_ROW: snprintf(buf, cap, "csr"); return true;
        case SDI_SPMM_BSR:
            if (!one_of(c->block, 4, 8, 16))
                return false;
            snprintf(buf, cap, "bsr%d", c->block);
            return true;
        case SDI_SPMM_BELL:
            if (c->block != 16 && c->block != 32)
                return false;
            snprintf(buf, cap, "bell%d", c->block);
            return true;
        case SDI_SPMM_BSR_TC: snprintf(buf, cap, "tc"); return true;
        default: return false; /* split rows, row and column windows, PCSR */
        }
    }
    if (im->kind == SDI_IMPL_SPGEMM && im->spgemm_cfg.family != SDI_SPGEMM_DENSE) {
        snprintf(buf, cap, "%s", sdi_spgemm_family_name(im->spgemm_cfg.family));
        return true;
    }
    return false;
}

bool sdi_impl_is_spgemm(const sdi_impl *im)
{
    return im->kind == SDI_IMPL_SPGEMM || (im->kind == SDI_IMPL_VENDOR && im->op == SD_OP_SPGEMM);
}

/* SpGEMM accumulators and floating-point atomics: the hash tables and dense stripes
 * (group and CTA, shared memory) and the global stripes add products with atomicAdd
 * from several lanes of a row, in an order that varies run to run; only the tiny bin
 * (a thread per row, a sorted list in registers) sums in a fixed order. The scan and
 * the compaction move integers and finished values. So a SpGEMM plan is deterministic
 * exactly when every bin of its schedule is tiny. */
static bool spgemm_uses_atomics(const sdi_impl *im)
{
    if (!im->built || im->sg_exec == NULL)
        return im->spgemm_cfg.force_kind != SDI_SG_TINY;
    const sdi_sg_schedule *s = sdi_spgemm_exec_schedule(im->sg_exec);
    for (int b = 0; b < s->nbins; b++)
        if (s->bins[b].nrows > 0 && s->bins[b].kind != SDI_SG_TINY && s->bins[b].kind != SDI_SG_COPY)
            return true;
    return false;
}

bool sdi_impl_uses_atomics(const sdi_impl *im)
{
    switch (im->kind) {
    case SDI_IMPL_SPMV: return im->spmv_cfg.family == SDI_SPMV_COO;
    case SDI_IMPL_SPMM:
        /* Known before lowering: the atomic split mode and balanced ParamSpMM. */
        if (im->built)
            return !im->spmm_low.deterministic;
        return (im->spmm_cfg.tmpl == SDI_SPMM_CSR_SPLIT &&
                (im->spmm_cfg.split_mode == SDI_SPLIT_ATOMIC ||
                 im->spmm_cfg.split_mode == SDI_SPLIT_SEGATOMIC)) ||
               (im->spmm_cfg.tmpl == SDI_SPMM_PCSR && im->spmm_cfg.pcsr_s);
    case SDI_IMPL_VENDOR:
        /* The variants cuSPARSE documents as bitwise reproducible run to run (its SpGEMM
         * algorithms all are). */
        if (im->op == SD_OP_SPGEMM)
            return false;
        return !(strcmp(im->vendor_name, "csr_alg2") == 0 || strcmp(im->vendor_name, "coo_alg2") == 0);
    case SDI_IMPL_SPGEMM: return spgemm_uses_atomics(im);
    /* Foreign code: what it does cannot be checked, so it is never called reproducible. */
    case SDI_IMPL_AGENT: return true;
    default: return false;
    }
}

void sdi_impl_release(sdi_impl *im)
{
    if (im == NULL)
        return;
    sdi_spmv_exec_free(&im->spmv_exec);
    sdi_spmv_plan_free(&im->spmv_plan);
    sdi_spmm_unload(&im->spmm_ld);
    sdi_spmm_lowered_free(&im->spmm_low);
    sdi_vendor_destroy(im->vendor);
    im->vendor = NULL;
    sdi_spgemm_exec_destroy(im->sg_exec);
    im->sg_exec = NULL;
    sdi_sg_lowered_free(&im->sg_low);
    sdi_vendor_spgemm_destroy(im->sg_vendor);
    im->sg_vendor = NULL;
    if (im->sg_owns_ops) {
        sdi_spgemm_operands_destroy(im->sg_ops);
        im->sg_ops = NULL;
        im->sg_owns_ops = 0;
    }
    sdi_harness_unload(&im->agent_h);
    im->built = 0;
}

/* Seeds ctx's memo with the cubin of a lowered plan (kernel-cache hit). */
static sd_status seed_memo(sd_context *ctx, const sdi_jit_request *req, const void *cubin,
                           size_t size)
{
    return cubin != NULL ? sdi_jit_memo_put(ctx, req, cubin, size) : SD_OK;
}

sd_status sdi_impl_build(sd_context *ctx, const sd_csr *a, sdi_impl *im, const void *seed_cubin,
                         size_t seed_size)
{
    sdi_macro macros[SDI_SPMM_MAX_MACROS > SDI_SPMV_MAX_MACROS ? SDI_SPMM_MAX_MACROS : SDI_SPMV_MAX_MACROS];
    sdi_jit_request req;
#define SD_FREE_ALL sdi_impl_release(im)
    if (im->built)
        return SD_OK;
    double t0 = sdi_now();
    switch (im->kind) {
    case SDI_IMPL_SPMV:
        SD_TRY(sdi_spmv_lower(&im->spmv_cfg, a, im->spmv_st, &ctx->props, &im->spmv_plan));
        im->spmv_st = NULL; /* borrowed: not kept past the tuner */
        im->lower_ms = (sdi_now() - t0) * 1e3;
        if (seed_cubin != NULL && im->spmv_plan.nlaunches > 0) {
            sdi_spmv_plan_jit_request(&im->spmv_plan, ctx->arch[0] ? ctx->arch : NULL, macros, &req);
            SD_TRY(seed_memo(ctx, &req, seed_cubin, seed_size));
        }
        t0 = sdi_now();
        SD_TRY(sdi_spmv_exec_create(ctx, &im->spmv_plan, &im->spmv_exec));
        im->compile_ms = im->spmv_exec.compile_ms;
        im->cubin_hit = im->spmv_exec.cubin_hit;
        break;
    case SDI_IMPL_SPMM:
        SD_TRY(sdi_spmm_lower(a, &im->spmm_cfg, &im->spmm_low));
        im->lower_ms = (sdi_now() - t0) * 1e3;
        if (seed_cubin != NULL && im->spmm_low.nlaunches > 0) {
            sdi_spmm_jit_request(&im->spmm_low, macros, &req);
            SD_TRY(seed_memo(ctx, &req, seed_cubin, seed_size));
        }
        t0 = sdi_now();
        /* The caller's B and C may change per call: the graph's node arguments are
         * updated in place, and a stream the caller captures gets plain launches
         * (sdi_program_run). */
        SD_TRY(sdi_spmm_load(ctx, &im->spmm_low, sdi_config_get()->graphs, &im->spmm_ld));
        im->compile_ms = im->spmm_ld.compile_ms;
        im->cubin_hit = im->spmm_ld.compile_ms == 0;
        break;
    case SDI_IMPL_VENDOR:
        if (im->op == SD_OP_SPGEMM)
            SD_TRY(sdi_vendor_spgemm_create(ctx, a, im->sg_b, im->sg_aat, im->vendor_name,
                                            &im->sg_vendor));
        else {
            const sdi_vendor_options vo = {.no_graph = im->vendor_plain};
            SD_TRY(sdi_vendor_create_ex(ctx, a, im->op, im->k, im->vendor_name, &vo, &im->vendor));
        }
        break;
    case SDI_IMPL_SPGEMM: {
        if (im->sg_ops == NULL) {
            SD_TRY(sdi_spgemm_operands_create(ctx, a, im->sg_b, im->sg_aat, &im->sg_ops));
            im->sg_owns_ops = 1;
        }
        /* The units are kept: the kernel cache stores each one's source and cubin. A
         * cache hit seeds the memo with them before the build (one cubin per unit, so
         * seed_cubin does not apply). */
        sdi_sg_schedule sched;
        SD_TRY(sdi_spgemm_config_request(ctx, im->sg_ops, &im->spgemm_cfg, &im->sg_low, &sched));
        im->lower_ms = (sdi_now() - t0) * 1e3;
        t0 = sdi_now();
        /* The schedule just built moves into the executor (built once, not twice). */
        sd_status st = sdi_spgemm_exec_adopt(ctx, im->sg_ops, &im->spgemm_cfg, &sched, &im->sg_low,
                                             &im->sg_exec);
        sdi_sg_schedule_free(&sched); /* empty unless the executor failed first */
        SD_TRY(st);
        im->sg_value_bytes = a->nnz * 4 + (im->sg_b != NULL ? im->sg_b->nnz * 4 : 0);
        const sdi_spgemm_exec_info *in = sdi_spgemm_exec_get_info(im->sg_exec);
        im->compile_ms = in->compile_ms;
        im->cubin_hit = in->compile_ms == 0;
        break;
    }
    case SDI_IMPL_AGENT:
        if (im->op != SD_OP_SPMV && im->op != SD_OP_SPMM)
            return SDI_ERR(SD_ERR_UNSUPPORTED, "impl: agent kernels cover SpMV and SpMM");
        SD_TRY(sdi_harness_load(im->agent_so, &im->agent_h));
        /* Mapped: the file is no longer needed (no file outlives a crash later on). */
        if (im->agent_unlink)
            unlink(im->agent_so);
        SD_TRY(sdi_harness_prepare(&im->agent_h, a, im->op, im->k));
        break;
    default: return SDI_ERR(SD_ERR_INTERNAL, "impl: no implementation kind");
    }
    im->load_ms = (sdi_now() - t0) * 1e3 - im->compile_ms;
    im->built = 1;
    return SD_OK;
#undef SD_FREE_ALL
}

/* One candidate's kernel into the memo, through a private lowering. */
static sd_status precompile_one(sd_context *ctx, const sd_csr *a, const sdi_impl *im)
{
    sdi_macro macros[SDI_SPMM_MAX_MACROS > SDI_SPMV_MAX_MACROS ? SDI_SPMM_MAX_MACROS : SDI_SPMV_MAX_MACROS];
    sdi_jit_request req;
    const sdi_cubin *cubin = NULL;
    sd_status s;
    if (im->kind == SDI_IMPL_SPMV) {
        sdi_spmv_plan plan;
        memset(&plan, 0, sizeof plan);
        s = sdi_spmv_lower(&im->spmv_cfg, a, im->spmv_st, &ctx->props, &plan);
        if (s == SD_OK && plan.nlaunches > 0) {
            sdi_spmv_plan_jit_request(&plan, ctx->arch[0] ? ctx->arch : NULL, macros, &req);
            s = sdi_jit_get(ctx, &req, &cubin, NULL);
        }
        sdi_spmv_plan_free(&plan);
    } else {
        sdi_spmm_lowered low;
        memset(&low, 0, sizeof low);
        s = sdi_spmm_lower(a, &im->spmm_cfg, &low);
        if (s == SD_OK && low.nlaunches > 0) {
            sdi_spmm_jit_request(&low, macros, &req);
            s = sdi_jit_get(ctx, &req, &cubin, NULL);
        }
        sdi_spmm_lowered_free(&low);
    }
    return s;
}

sd_status sdi_impl_precompile(sd_context *ctx, const sd_csr *a, const sdi_impl *const *list, int n, int threads,
                              double *wall_ms)
{
    double t0 = sdi_now();
    if (threads < 1)
        threads = 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = 0; i < n; i++) {
        const sdi_impl *im = list[i];
        if (im == NULL || (im->kind != SDI_IMPL_SPMV && im->kind != SDI_IMPL_SPMM))
            continue;
        if (precompile_one(ctx, a, im) != SD_OK) {
            sdi_log(2, "precompile: %s (the build reports it)", sd_last_error());
            sdi_error_clear(); /* this thread's message; the sequential build meets it again */
        }
    }
    if (wall_ms != NULL)
        *wall_ms = (sdi_now() - t0) * 1e3;
    return ctx->broken ? SDI_ERR(SD_ERR_CUDA, "%s", ctx->broken_reason) : SD_OK;
}

sd_status sdi_impl_run(sd_context *ctx, sdi_impl *im, const float *in, float *out,
                       cudaStream_t stream)
{
    if (!im->built)
        return SDI_ERR(SD_ERR_INTERNAL, "impl: run before build");
    switch (im->kind) {
    case SDI_IMPL_SPMV: {
        sd_status s = sdi_spmv_exec_bind(&im->spmv_exec, &im->spmv_plan, in, out);
        return s != SD_OK ? s : sdi_spmv_exec_run(ctx, &im->spmv_exec, stream);
    }
    case SDI_IMPL_SPMM: return sdi_spmm_run(ctx, &im->spmm_ld, in, out, stream);
    case SDI_IMPL_VENDOR:
        if (im->op == SD_OP_SPGEMM)
            break;
        return sdi_vendor_run(im->vendor, in, out, stream);
    case SDI_IMPL_AGENT: {
        int rc = im->agent_h.compute(im->agent_h.state, in, out, stream);
        if (rc != 0)
            return SDI_ERR(SD_ERR_CUDA, "agent kernel: sd_agent_compute returned %d (%s)", rc,
                           cudaGetErrorString((cudaError_t)rc));
        return SD_OK;
    }
    default: break;
    }
    return SDI_ERR(SD_ERR_INTERNAL, "impl: not a dense-output implementation");
}

sd_status sdi_impl_run_spgemm(sd_context *ctx, sdi_impl *im, cudaStream_t stream,
                              sd_device_csr *c)
{
    (void)ctx;
    memset(c, 0, sizeof *c);
    if (!im->built || !sdi_impl_is_spgemm(im))
        return SDI_ERR(SD_ERR_INTERNAL, "impl: not a built SpGEMM implementation");
    if (im->kind == SDI_IMPL_SPGEMM)
        return sdi_spgemm_exec_run(im->sg_exec, stream, SDI_SG_ALLOC_ASYNC, c);
    return sdi_vendor_spgemm_run(im->sg_vendor, stream, c);
}

int64_t sdi_impl_peak_bytes(const sdi_impl *im)
{
    if (!im->built)
        return 0;
    if (im->kind == SDI_IMPL_SPGEMM)
        return sdi_spgemm_exec_get_info(im->sg_exec)->peak_bytes;
    if (im->kind == SDI_IMPL_VENDOR && im->op == SD_OP_SPGEMM)
        return sdi_vendor_spgemm_bytes(im->sg_vendor);
    return 0;
}

sd_status sdi_impl_update_values(sd_context *ctx, sdi_impl *im, const sd_csr *a)
{
    if (!im->built)
        return SDI_ERR(SD_ERR_INTERNAL, "impl: update before build");
    switch (im->kind) {
    case SDI_IMPL_SPMV: {
        sdi_devfmt *f = &im->spmv_plan.fmt;
        sd_status s = sdi_format_refresh_values(f, a);
        for (int i = 0; s == SD_OK && i < f->n_arrays; i++) {
            const sdi_fmt_array *fa = &f->arr[i];
            if (fa->role != SDI_ROLE_VALUE || fa->count == 0)
                continue;
            int b = sdi_program_find_buffer(&im->spmv_exec.prog, fa->name);
            if (b < 0)
                return SDI_ERR(SD_ERR_INTERNAL, "update values: no device buffer %s", fa->name);
            s = sdi_copy_to_device(ctx, im->spmv_exec.prog.buffers[b].dev, fa->data,
                                   (size_t)fa->host_count * (size_t)fa->elem_size, fa->name);
        }
        return s;
    }
    case SDI_IMPL_SPMM:
        sdi_spmm_lowered_refresh(&im->spmm_low, a->vals);
        return sdi_spmm_upload_values(ctx, &im->spmm_low, &im->spmm_ld);
    case SDI_IMPL_VENDOR:
        if (im->op == SD_OP_SPGEMM)
            return sdi_vendor_spgemm_update_values(im->sg_vendor, a->vals,
                                                   im->sg_b ? im->sg_b->vals : NULL);
        return sdi_vendor_update_values(im->vendor, a->vals);
    case SDI_IMPL_SPGEMM:
        return sdi_spgemm_operands_set_values(im->sg_ops, a->vals, im->sg_b ? im->sg_b->vals : NULL);
    case SDI_IMPL_AGENT:
        /* The harness has no value-refresh entry point: its representation is rebuilt from
         * the new values (preprocess copies what it needs; the pattern is unchanged). */
        if (im->agent_h.prepared)
            im->agent_h.cleanup(im->agent_h.state);
        im->agent_h.prepared = false;
        im->agent_h.state = NULL;
        return sdi_harness_prepare(&im->agent_h, a, im->op, im->k);
    default: return SDI_ERR(SD_ERR_INTERNAL, "impl: no implementation kind");
    }
}

sd_status sdi_impl_jit_request(const sdi_impl *im, sd_context *ctx, sdi_macro *macros,
                               sdi_jit_request *req)
{
    memset(req, 0, sizeof *req);
    if (!im->built)
        return SDI_ERR(SD_ERR_INTERNAL, "impl: no compiled code before build");
    if (im->kind == SDI_IMPL_SPMV && im->spmv_plan.nlaunches > 0) {
        sdi_spmv_plan_jit_request(&im->spmv_plan, ctx->arch[0] ? ctx->arch : NULL, macros, req);
        return SD_OK;
    }
    if (im->kind == SDI_IMPL_SPMM && im->spmm_low.nlaunches > 0) {
        sdi_spmm_jit_request(&im->spmm_low, macros, req);
        return SD_OK;
    }
    if (im->kind == SDI_IMPL_SPGEMM)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "impl: a SpGEMM program is one request per launch "
                       "unit (sdi_spgemm_unit_request over sg_low)");
    return SDI_ERR(SD_ERR_UNSUPPORTED, "impl: no generated code (vendor or empty program)");
}

void sdi_impl_bytes(const sdi_impl *im, int64_t *value, int64_t *meta, int64_t *work)
{
    *value = *meta = *work = 0;
    if (im->kind == SDI_IMPL_SPMV && im->built) {
        *value = im->spmv_plan.m_value;
        *meta = im->spmv_plan.m_meta;
        *work = im->spmv_plan.workspace;
    } else if (im->kind == SDI_IMPL_SPMM && im->built) {
        *value = im->spmm_low.bytes_value;
        *meta = im->spmm_low.bytes_meta;
        *work = im->spmm_low.bytes_work;
    } else if (im->kind == SDI_IMPL_SPGEMM && im->built) {
        /* Operands: values of A (and B), the rest is index metadata; workspaces are W. */
        int64_t ops = sdi_spgemm_operands_bytes(im->sg_ops);
        const sdi_spgemm_exec_info *in = sdi_spgemm_exec_get_info(im->sg_exec);
        *value = im->sg_value_bytes;
        *meta = ops - *value;
        *work = in->plan_bytes - ops;
    }
}
