/* tests/cpu/test_tune_precompile.c: the search's parallel kernel compilation
 * (sdi_impl_precompile, src/tune/impl.c) without a GPU, on a host-only context (the JIT
 * needs only the context's memo, architecture and GPU profile): every SpMV and SpMM
 * candidate of a small sweep is compiled into the memo by 2 threads, the candidates are
 * left untouched, the builds' own requests are then memo hits, the switch is read from
 * SPARSEDITTO_PARALLEL_JIT, and nothing leaks. */
#include <stdlib.h>

#include "analysis/gpu.h"
#include "gen/gen.h"
#include "plan/spmm.h"
#include "plan/spmv.h"
#include "tune/impl.h"
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

/* Whether im's kernel is in the memo: its request, as its build would make it, hits. */
static bool in_memo(sd_context *ctx, const sd_csr *a, const sdi_impl *im)
{
    sdi_macro macros[64];
    sdi_jit_request req;
    const sdi_cubin *c = NULL;
    bool hit = false;
    if (im->kind == SDI_IMPL_SPMV) {
        sdi_spmv_plan p;
        memset(&p, 0, sizeof p);
        if (sdi_spmv_lower(&im->spmv_cfg, a, NULL, &ctx->props, &p) != SD_OK)
            return false;
        sdi_spmv_plan_jit_request(&p, "sm_90", macros, &req);
        bool ok = sdi_jit_get(ctx, &req, &c, &hit) == SD_OK && hit;
        sdi_spmv_plan_free(&p);
        return ok;
    }
    sdi_spmm_lowered l;
    memset(&l, 0, sizeof l);
    if (sdi_spmm_lower(a, &im->spmm_cfg, &l) != SD_OK)
        return false;
    sdi_spmm_jit_request(&l, macros, &req);
    bool ok = sdi_jit_get(ctx, &req, &c, &hit) == SD_OK && hit;
    sdi_spmm_lowered_free(&l);
    return ok;
}

static void test_precompile_spmv_spmm(void)
{
    sd_context ctx;
    host_context(&ctx);
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=3000,deg=8,alpha=1.8,max=400", 3, &a));
    long long live = sdi_alloc_live_bytes();
    sdi_spmv_stats st;
    SDT_OK(sdi_spmv_stats_compute(&a, &st));
    sdi_spmv_config *vc = NULL;
    sdi_spmm_config *mc = NULL;
    int nv = 0, nm = 0;
    SDT_OK(sdi_spmv_enumerate(&st, &ctx.props, 0, 0, 8, &vc, &nv));
    SDT_OK(sdi_spmm_enumerate(&a, 32, 0, 0, 8, &mc, &nm));
    SDT_CHECK(nv >= 2 && nm >= 2, "candidates: %d SpMV, %d SpMM", nv, nm);
    int n = nv + nm + 1;
    sdi_impl *im = calloc((size_t)n, sizeof *im);
    const sdi_impl **list = calloc((size_t)n, sizeof *list);
    for (int i = 0; i < nv; i++)
        im[i].kind = SDI_IMPL_SPMV, im[i].op = SD_OP_SPMV, im[i].spmv_cfg = vc[i];
    for (int i = 0; i < nm; i++)
        im[nv + i].kind = SDI_IMPL_SPMM, im[nv + i].op = SD_OP_SPMM, im[nv + i].k = 32, im[nv + i].spmm_cfg = mc[i];
    im[n - 1].kind = SDI_IMPL_VENDOR; /* skipped: nothing of ours to compile */
    for (int i = 0; i < n; i++)
        list[i] = &im[i];
    double wall = -1;
    SDT_OK(sdi_impl_precompile(&ctx, &a, list, n, 2, &wall));
    SDT_CHECK(wall > 0, "wall time reported (%.1f ms)", wall);
    int hits = 0;
    for (int i = 0; i < n - 1; i++) {
        SDT_CHECK(!im[i].built && im[i].spmv_plan.nlaunches == 0 && im[i].spmm_low.nlaunches == 0,
                  "candidate %d untouched", i);
        hits += in_memo(&ctx, &a, &im[i]);
    }
    SDT_CHECK(hits == n - 1, "%d of %d kernels in the memo", hits, n - 1);
    printf("  %d SpMV + %d SpMM kernels compiled by 2 threads in %.0f ms\n", nv, nm, wall);
    free(im);
    free(list);
    sdi_free(vc);
    sdi_free(mc);
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
