/* tests/cpu/test_tune_precompile.c: the search's parallel kernel compilation
 * (sdi_candidate_precompile, src/tune/candidate.c) without a GPU, on a host-only context
 * (the JIT needs only the context's memo, architecture and GPU profile): the first plan of
 * every SpMV and SpMM family (its defaults, through the family table) is compiled into the
 * memo by 2 threads, the plans are left untouched, the builds' own requests (of the plans
 * that lower on this matrix) are then memo hits, a plan of another operator is skipped,
 * the switch is read from SPARSEDITTO_PARALLEL_JIT, and nothing leaks. */
#include <stdlib.h>

#include "analysis/gpu.h"
#include "analysis/plan_stats.h"
#include "gen/gen.h"
#include "runtime/runtime.h"
#include "tune/candidate.h"
#include "sdt.h"

SDI_HIDDEN void sdi_memo_clear(sd_context *ctx);

static void host_context(sd_context *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->magic = SDI_CONTEXT_MAGIC;
    snprintf(ctx->arch, sizeof ctx->arch, "sm_90");
    pthread_mutex_init(&ctx->memo_lock, NULL);
    SDT_OK(sdi_gpu_profile("H200", &ctx->props));
}

/* Whether p's kernel is in the memo: its request, as its build would make it, hits. */
static bool in_memo(sd_context *ctx, const sdi_task *t, const sdi_plan *p)
{
    sdi_macro macros[SDI_LOW_MAX_MACROS];
    sdi_jit_request req;
    const sdi_cubin *c = NULL;
    bool hit = false;
    sdi_lowered low;
    memset(&low, 0, sizeof low);
    if (sdi_plan_lower(t, p, &low) != SD_OK)
        return false;
    bool ok = low.nlaunches > 0 &&
              sdi_lowered_jit_request(&low, sdi_exe_arch(ctx, p->op), macros, &req) == SD_OK &&
              sdi_jit_get(ctx, &req, &c, &hit) == SD_OK && hit;
    sdi_lowered_free(&low);
    return ok;
}

/* The defaults of every family of op that applies, plus a plan of another operator
 * (skipped); *n receives the count. */
static sdi_plan *first_plans(const sdi_task *t, int *n, int *ours)
{
    sdi_plan *v = calloc((size_t)sdi_family_count() + 1, sizeof *v);
    *n = *ours = 0;
    if (v == NULL)
        return NULL;
    for (int i = 0; i < sdi_family_count(); i++) {
        const sdi_family *f = sdi_family_at(i);
        if (f == NULL || f->op != t->op)
            continue;
        if (sdi_plan_default(t, i, &v[*n]) == SD_OK)
            (*n)++;
        sdi_error_clear();
    }
    *ours = *n;
    v[*n].op = SD_OP_SPGEMM; /* not compiled here: SpGEMM precompiles its units itself */
    v[*n].k = 1;
    v[*n].family = sdi_family_find(SD_OP_SPGEMM, "csr_hash");
    (*n)++;
    return v;
}

static void test_precompile_spmv_spmm(void)
{
    sd_context ctx;
    host_context(&ctx);
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=3000,deg=8,alpha=1.8,max=400", 3, &a));
    long long live = sdi_alloc_live_bytes();
    sdi_spmv_stats vst;
    sdi_spmm_stats mst;
    SDT_OK(sdi_spmv_stats_compute(&a, &vst));
    sdi_spmm_stats_compute(&a, &mst);
    const sdi_task tv = {.op = SD_OP_SPMV, .k = 1, .a = &a, .gpu = &ctx.props, .spmv = &vst};
    const sdi_task tm = {.op = SD_OP_SPMM, .k = 32, .a = &a, .gpu = &ctx.props, .spmm = &mst};
    const sdi_task *tasks[2] = {&tv, &tm};
    int total = 0;
    for (int o = 0; o < 2; o++) {
        int n = 0, ours = 0;
        sdi_plan *v = first_plans(tasks[o], &n, &ours);
        SDT_CHECK(v != NULL && ours >= 2, "op %d: %d plans", (int)tasks[o]->op, ours);
        if (v == NULL)
            continue;
        sdi_plan *copy = calloc((size_t)n, sizeof *copy);
        SDT_CHECK(copy != NULL, "calloc");
        if (copy == NULL) {
            free(v);
            continue;
        }
        memcpy(copy, v, (size_t)n * sizeof *v);
        double wall = -1;
        SDT_OK(sdi_candidate_precompile(&ctx, tasks[o], v, n, 2, &wall));
        SDT_CHECK(wall > 0, "wall time reported (%.1f ms)", wall);
        int hits = 0, lowerable = 0;
        for (int i = 0; i < ours; i++) {
            SDT_CHECK(memcmp(&v[i], &copy[i], sizeof v[i]) == 0, "plan %d untouched", i);
            sdi_lowered low;
            memset(&low, 0, sizeof low);
            const bool lowers = sdi_plan_lower(tasks[o], &v[i], &low) == SD_OK && low.nlaunches > 0;
            sdi_lowered_free(&low);
            sdi_error_clear();
            if (!lowers)
                continue; /* its build refuses it (padding, diagonals): nothing to compile */
            lowerable++;
            hits += in_memo(&ctx, tasks[o], &v[i]);
        }
        SDT_CHECK(lowerable >= 2 && hits == lowerable, "op %d: %d of %d kernels in the memo",
                  (int)tasks[o]->op, hits, lowerable);
        printf("  op %d: %d kernels compiled by 2 threads in %.0f ms\n", (int)tasks[o]->op, ours, wall);
        total += ours;
        free(copy);
        free(v);
    }
    SDT_CHECK(total > 0, "kernels compiled");
    sdi_memo_clear(&ctx);
    SDT_CHECK(sdi_alloc_live_bytes() == live, "no leak (%lld bytes live, was %lld)", sdi_alloc_live_bytes(), live);
    sd_csr_free(&a);
    pthread_mutex_destroy(&ctx.memo_lock);
}

static void test_switch(void)
{
    unsetenv("SPARSEDITTO_PARALLEL_JIT");
    sdi_config_reload();
    SDT_CHECK(!sdi_config_get()->parallel_jit, "off by default (no gain on the H200's quick set)");
    setenv("SPARSEDITTO_PARALLEL_JIT", "1", 1);
    sdi_config_reload();
    SDT_CHECK(sdi_config_get()->parallel_jit, "on with =1");
    unsetenv("SPARSEDITTO_PARALLEL_JIT");
    sdi_config_reload();
}

int main(void)
{
    sdt_init("test_tune_precompile");
    SDT_RUN(test_precompile_spmv_spmm);
    SDT_RUN(test_switch);
    return sdt_finish();
}
