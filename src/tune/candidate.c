/* src/tune/candidate.c: one candidate of a search (a plan of ours, a cuSPARSE variant or an
 * agent kernel): its labels, its properties, and its build into an executable — a plan
 * lowered through its family with the task's statistics, compiled through the context's
 * memo, loaded and uploaded. */
#include <stdio.h>
#include <string.h>

#include <omp.h>

#include "../runtime/runtime.h"
#include "candidate.h"

#define SD_FREE_ALL ((void)0)

void sdi_candidate_family(const sdi_candidate *c, char *buf, size_t cap)
{
    switch (c->kind) {
    case SDI_CAND_PLAN: sdi_plan_label(&c->plan, buf, cap); break;
    case SDI_CAND_VENDOR: snprintf(buf, cap, "cusparse.%s", c->vendor_name); break;
    /* "agent", as search records and cache entries have always named it */
    case SDI_CAND_AGENT: snprintf(buf, cap, "agent"); break;
    default: snprintf(buf, cap, "none"); break;
    }
}

_Static_assert(SDI_PLAN_TEXT >= sizeof "cusparse " + sizeof(((sdi_candidate *)0)->vendor_name) &&
                   SDI_PLAN_TEXT >= sizeof "agent kernel (model )" +
                                        sizeof(((sdi_candidate *)0)->agent_model),
               "SDI_PLAN_TEXT is shorter than a candidate's description");

void sdi_candidate_describe(const sdi_candidate *c, char *buf, size_t cap)
{
    switch (c->kind) {
    case SDI_CAND_PLAN: sdi_plan_describe(&c->plan, buf, cap); break;
    case SDI_CAND_VENDOR: snprintf(buf, cap, "cusparse %s", c->vendor_name); break;
    case SDI_CAND_AGENT:
        snprintf(buf, cap, "agent kernel (model %s)", c->agent_model[0] ? c->agent_model : "?");
        break;
    default: snprintf(buf, cap, "none"); break;
    }
}

bool sdi_candidate_vo_label(const sdi_candidate *c, char *buf, size_t cap)
{
    if (cap > 0)
        buf[0] = '\0';
    if (c->kind != SDI_CAND_PLAN)
        return false; /* cuSPARSE and agent kernels are not plans of ours */
    const sdi_family *f = sdi_plan_family(&c->plan);
    if (f == NULL || f->vo_label == NULL)
        return false;
    if (!f->vo_label(&c->plan, buf, cap)) {
        if (cap > 0)
            buf[0] = '\0';
        return false;
    }
    return true;
}

/* A built SpGEMM plan says from its schedule (sdi_sg_schedule_uses_atomics: atomics unless
 * every bin with rows is tiny); before the build its family says, from the plan alone. */
static bool spgemm_schedule_atomics(const sdi_candidate *c, bool *atomics)
{
    if (!c->built || c->exe.kind != SDI_EXE_SPGEMM || c->exe.sg == NULL)
        return false;
    const sdi_sg_schedule *s = sdi_spgemm_exec_schedule(c->exe.sg);
    if (s == NULL)
        return false;
    *atomics = sdi_sg_schedule_uses_atomics(s);
    return true;
}

bool sdi_candidate_uses_atomics(const sdi_candidate *c)
{
    switch (c->kind) {
    case SDI_CAND_PLAN: {
        bool atomics = false;
        if (c->op == SD_OP_SPGEMM && spgemm_schedule_atomics(c, &atomics))
            return atomics;
        /* A built SpMM plan: its lowering knows (a split plan whose rows are never cut adds
         * nothing). */
        if (c->op == SD_OP_SPMM && c->built && c->exe.kind == SDI_EXE_PROGRAM)
            return c->exe.low.atomics != 0;
        const sdi_family *f = sdi_plan_family(&c->plan);
        return f != NULL && f->uses_atomics != NULL && f->uses_atomics(&c->plan);
    }
    case SDI_CAND_VENDOR:
        /* The variants cuSPARSE documents as bitwise reproducible run to run (its SpGEMM
         * algorithms all are). */
        if (c->op == SD_OP_SPGEMM)
            return false;
        return !(strcmp(c->vendor_name, "csr_alg2") == 0 || strcmp(c->vendor_name, "coo_alg2") == 0);
    /* Foreign code: what it does cannot be checked, so it is never called reproducible. */
    case SDI_CAND_AGENT: return true;
    default: return false;
    }
}

bool sdi_candidate_same(const sdi_candidate *a, const sdi_candidate *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case SDI_CAND_PLAN: return sdi_plan_equal(&a->plan, &b->plan);
    case SDI_CAND_VENDOR: return a->op == b->op && strcmp(a->vendor_name, b->vendor_name) == 0;
    case SDI_CAND_AGENT: return strcmp(a->agent_so, b->agent_so) == 0;
    default: return true;
    }
}

void sdi_candidate_release(sdi_candidate *c)
{
    if (c == NULL)
        return;
    sdi_exe_free(&c->exe);
    memset(&c->exe, 0, sizeof c->exe);
    c->built = 0;
}

/* The task with the statistics a plan's family reads, computed here when the caller's task
 * lacks them (a kernel-cache hit builds its plan without a search). */
typedef struct {
    sdi_task t;
    sdi_spmv_stats spmv;
    sdi_spmm_stats spmm;
    sdi_sg_summary sg;
    sdi_sg_limits lim;
} task_fill;

static sd_status fill_task(sd_context *ctx, const sdi_task *in, const sdi_candidate *c,
                           sdi_spgemm_operands *ops, task_fill *f)
{
    f->t = *in;
    if (f->t.gpu == NULL)
        f->t.gpu = &ctx->props;
    const sdi_family *fam = sdi_plan_family(&c->plan);
    const uint32_t need = fam != NULL ? fam->stats : 0;
    if ((need & SDI_STATS_SPMV) && f->t.spmv == NULL) {
        SD_TRY(sdi_spmv_stats_compute(f->t.a, &f->spmv));
        f->t.spmv = &f->spmv;
    }
    if ((need & SDI_STATS_SPMM) && f->t.spmm == NULL) {
        sdi_spmm_stats_compute(f->t.a, &f->spmm);
        f->t.spmm = &f->spmm;
    }
    if (c->op == SD_OP_SPGEMM) {
        if (f->t.sg_rows == NULL && ops != NULL)
            f->t.sg_rows = sdi_spgemm_operands_rowinfo(ops);
        if (f->t.sg == NULL && f->t.sg_rows != NULL) {
            sdi_sg_summarize(f->t.sg_rows, &f->sg);
            f->t.sg = &f->sg;
        }
        if (f->t.sg_lim == NULL) {
            sdi_sg_limits_from_props(f->t.gpu, &f->lim);
            f->t.sg_lim = &f->lim;
        }
    }
    return SD_OK;
}

/* Seeds ctx's memo with the cubin of a lowered plan (kernel-cache hit). */
static sd_status seed_memo(sd_context *ctx, const sdi_lowered *low, int op, const void *cubin,
                           size_t size)
{
    if (cubin == NULL || low->nlaunches <= 0)
        return SD_OK;
    sdi_macro macros[SDI_LOW_MAX_MACROS];
    sdi_jit_request req;
    SD_TRY(sdi_lowered_jit_request(low, sdi_exe_arch(ctx, op), macros, &req));
    return sdi_jit_memo_put(ctx, &req, cubin, size);
}

static sd_status build_plan(sd_context *ctx, const sdi_task *in, sdi_candidate *c,
                            const void *seed_cubin, size_t seed_size)
{
    sdi_lowered low;
    memset(&low, 0, sizeof low);
    sdi_spgemm_operands *ops = c->sg_ops;
    bool owns_ops = false;
#undef SD_FREE_ALL
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_lowered_free(&low);                                                            \
        if (owns_ops)                                                                      \
            sdi_spgemm_operands_destroy(ops);                                              \
    } while (0)
    double t0 = sdi_now();
    if (c->op == SD_OP_SPGEMM && ops == NULL) {
        SD_TRY(sdi_spgemm_operands_create(ctx, in->a, c->sg_b, c->sg_aat, &ops));
        owns_ops = true;
    }
    task_fill f;
    SD_TRY(fill_task(ctx, in, c, ops, &f));
    SD_TRY(sdi_plan_lower(&f.t, &c->plan, &low));
    c->lower_ms = (sdi_now() - t0) * 1e3;
    t0 = sdi_now();
    if (c->op == SD_OP_SPGEMM) {
        /* The schedule and units move into the executable (built once, not twice); a cache
         * hit seeds the memo with its units itself (one cubin per unit). */
        sd_status s = sdi_exe_create_spgemm(ctx, ops, owns_ops, &low, &c->exe);
        owns_ops = false; /* moved in, freed with the executable on failure */
        SD_TRY(s);
    } else {
        SD_TRY(seed_memo(ctx, &low, c->op, seed_cubin, seed_size));
        /* The caller's operands may change per call: the graph's node arguments are
         * updated in place, and a stream the caller captures gets plain launches
         * (sdi_program_run). */
        SD_TRY(sdi_exe_create_program(ctx, &low, sdi_config_get()->graphs, &c->exe));
    }
    c->compile_ms = c->exe.compile_ms;
    c->cubin_hit = c->exe.cubin_hit;
    c->load_ms = (sdi_now() - t0) * 1e3 - c->compile_ms;
    SD_FREE_ALL;
    return SD_OK;
#undef SD_FREE_ALL
#define SD_FREE_ALL ((void)0)
}

sd_status sdi_candidate_build(sd_context *ctx, const sdi_task *t, sdi_candidate *c,
                              const void *seed_cubin, size_t seed_size)
{
    if (c->built)
        return SD_OK;
    memset(&c->exe, 0, sizeof c->exe);
    c->lower_ms = c->load_ms = c->compile_ms = 0;
    c->cubin_hit = 0;
    sd_status s;
    double t0 = sdi_now();
    switch (c->kind) {
    case SDI_CAND_PLAN: s = build_plan(ctx, t, c, seed_cubin, seed_size); break;
    case SDI_CAND_VENDOR:
        s = c->op == SD_OP_SPGEMM
                ? sdi_exe_create_vendor_spgemm(ctx, t->a, c->sg_b, c->sg_aat, c->vendor_name, &c->exe)
                : sdi_exe_create_vendor(ctx, t->a, c->op, c->k, c->vendor_name, c->vendor_plain,
                                        &c->exe);
        c->load_ms = (sdi_now() - t0) * 1e3;
        break;
    case SDI_CAND_AGENT:
        if (c->op != SD_OP_SPMV && c->op != SD_OP_SPMM)
            return SDI_ERR(SD_ERR_UNSUPPORTED, "impl: agent kernels cover SpMV and SpMM");
        /* Mapped, the file is no longer needed (no file outlives a crash later on). */
        s = sdi_exe_create_agent(ctx, c->agent_so, c->agent_unlink != 0, t->a, c->op, c->k, &c->exe);
        c->load_ms = (sdi_now() - t0) * 1e3;
        break;
    default: return SDI_ERR(SD_ERR_INTERNAL, "impl: no implementation kind");
    }
    if (s != SD_OK) {
        sdi_candidate_release(c);
        return s;
    }
    c->built = 1;
    return SD_OK;
}

/* ------------------------------------------------------------------ precompilation */

/* One plan's kernel into the memo: its compile request alone (the family's `source`), else
 * through a private lowering, freed again. A plan without launches (no rows) compiles
 * nothing. */
static sd_status precompile_one(sd_context *ctx, const sdi_task *t, const sdi_plan *p)
{
    const sdi_family *f = sdi_plan_family(p);
    if (f == NULL)
        return SDI_ERR(SD_ERR_INTERNAL, "precompile: plan of no family");
    sdi_macro macros[SDI_LOW_MAX_MACROS];
    sdi_jit_request req;
    sdi_lowered low;
    memset(&low, 0, sizeof low);
    sd_status s = SD_ERR_UNSUPPORTED;
    if (f->source != NULL && f->source(t, p, &low) == SD_OK)
        s = sdi_lowered_jit_request(&low, sdi_exe_arch(ctx, p->op), macros, &req);
    if (s != SD_OK) { /* no source, or a request it cannot make: the full lowering's */
        sdi_error_clear();
        sdi_lowered_free(&low);
        s = sdi_plan_lower(t, p, &low);
        if (s == SD_OK && low.nlaunches == 0) {
            sdi_lowered_free(&low);
            return SD_OK;
        }
        if (s == SD_OK)
            s = sdi_lowered_jit_request(&low, sdi_exe_arch(ctx, p->op), macros, &req);
    }
    if (s == SD_OK) {
        const sdi_cubin *cubin = NULL;
        s = sdi_jit_get(ctx, &req, &cubin, NULL);
    }
    sdi_lowered_free(&low);
    return s;
}

sd_status sdi_candidate_precompile(sd_context *ctx, const sdi_task *t, const sdi_plan *plans, int n,
                                   int threads, double *wall_ms)
{
    double t0 = sdi_now();
    if (threads < 1)
        threads = 1;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int i = 0; i < n; i++) {
        if (plans[i].op != SD_OP_SPMV && plans[i].op != SD_OP_SPMM)
            continue;
        if (precompile_one(ctx, t, &plans[i]) != SD_OK) {
            sdi_log(2, "precompile: %s (the build reports it)", sd_last_error());
            sdi_error_clear(); /* this thread's message; the sequential build meets it again */
        }
    }
    if (wall_ms != NULL)
        *wall_ms = (sdi_now() - t0) * 1e3;
    return ctx->broken ? SDI_ERR(SD_ERR_CUDA, "%s", ctx->broken_reason) : SD_OK;
}
