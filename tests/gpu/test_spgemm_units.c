/* tests/gpu/test_spgemm_units.c: SpGEMM launch units shared through the context's memo:
 * a second executor of a configuration compiles nothing (compile_ms 0); a configuration
 * sharing only some units with an earlier one compiles exactly when it has a unit of its
 * own; executors after sdi_spgemm_precompile compile nothing; every product validated
 * against the CPU reference (the rule of docs/ARCHITECTURE.md "Validation", small-integer
 * values). The on-disk JIT
 * cache is turned off so that "compiled" means NVRTC ran. A stage's independent launches on
 * side streams give the same C bit for bit as one stream. An executor adopts the schedule
 * its configuration's lowering built (sdi_spgemm_lower_config, sdi_spgemm_exec_adopt).
 * The executor's CUDA graphs give the C of plain launches. Exit 77 without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "gen/gen.h"
#include "lower/spgemm_units.h"
#include "runtime/device_memory.h"
#include "runtime/spgemm_exec.h"
#include "sdt.h"

static sd_context *g_ctx;

/* cfg scheduled on op's rows under the device's limits and lowered (the schedule and its
 * units in out->sg, out->sg_units; free with sdi_lowered_free). */
static sd_status lower(const sdi_spgemm_operands *op, const sdi_spgemm_config *cfg,
                       sdi_lowered *out)
{
    sdi_sg_limits lim;
    sdi_sg_limits_from_props(&g_ctx->props, &lim);
    return sdi_spgemm_lower_config(&lim, sdi_spgemm_operands_rowinfo(op), cfg, out);
}

/* The executor of cfg on op: lowered, then adopted (the schedule moves in, the units are
 * read); what remains of the lowering is freed here. */
static sd_status executor(sdi_spgemm_operands *op, const sdi_spgemm_config *cfg,
                          sdi_spgemm_exec **e)
{
    *e = NULL;
    sdi_lowered low;
    sd_status s = lower(op, cfg, &low);
    if (s == SD_OK)
        s = sdi_spgemm_exec_adopt(g_ctx, op, &low.sg, &low.sg_units, e);
    sdi_lowered_free(&low);
    return s;
}

/* An executor of cfg on op: its compile time, a product checked against ref. */
static int run_one(const char *what, sdi_spgemm_operands *op, const sdi_reference *ref,
                   const sdi_spgemm_config *cfg, double *compile_ms)
{
    sdi_spgemm_exec *e = NULL;
    sd_device_csr c;
    memset(&c, 0, sizeof c);
    sd_status s = executor(op, cfg, &e);
    SDT_CHECK(s == SD_OK, "%s: executor: %s", what, sd_last_error());
    if (s != SD_OK)
        return 0;
    const sdi_spgemm_exec_info *in = sdi_spgemm_exec_get_info(e);
    *compile_ms = in->compile_ms;
    SDT_CHECK(in->max_regs > 0, "%s: no registers read back", what);
    s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
    if (s == SD_OK)
        s = sdi_stream_sync(g_ctx, "the units test", what);
    SDT_CHECK(s == SD_OK, "%s: run: %s", what, sd_last_error());
    int ok = s == SD_OK;
    if (ok) {
        sdi_validation v;
        s = sdi_spgemm_check(g_ctx, ref, &c, &v);
        SDT_CHECK(s == SD_OK, "%s: %s", what, v.reason);
        ok = s == SD_OK;
    }
    printf("  %-34s compile %7.1f ms, %d launches, nnz(C) %lld: %s\n", what, in->compile_ms,
           sdi_spgemm_exec_schedule(e)->nlaunches, (long long)c.nnz, ok ? "valid" : "INVALID");
    sd_device_csr_free(&c);
    sdi_spgemm_exec_destroy(e);
    return ok;
}

/* Whether every unit of cfg's lowering is a unit of base's (by name and source). */
static int units_within(const sdi_spgemm_operands *op, const sdi_spgemm_config *cfg,
                        const sdi_spgemm_config *base)
{
    sdi_lowered la, lb;
    SDT_OK(lower(op, cfg, &la));
    SDT_OK(lower(op, base, &lb));
    const sdi_sg_lowered *a = &la.sg_units, *b = &lb.sg_units;
    int all = 1;
    for (int u = 0; u < a->nunits; u++) {
        int found = 0;
        for (int v = 0; v < b->nunits && !found; v++)
            found = strcmp(a->units[u].name, b->units[v].name) == 0 &&
                    strcmp(a->units[u].source, b->units[v].source) == 0;
        all &= found;
    }
    sdi_lowered_free(&la);
    sdi_lowered_free(&lb);
    return all;
}

static void test_shared_units(void)
{
    sd_csr a;
    memset(&a, 0, sizeof a);
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    sdi_spgemm_operands *op = NULL;
    sdi_spgemm_config *cands = NULL;
    SDT_OK(sdi_gen("powerlaw:rows=6000,deg=12", 4242, &a));
    if (a.rowptr == NULL)
        return;
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 4243);
    SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &a, NULL, 0, &op));
    if (op == NULL)
        goto out;
    sdi_spgemm_config c1, c2;
    SDT_OK(sdi_spgemm_config_default(SDI_SPGEMM_HYBRID, &c1));
    c1.fuse = 0; /* a launch per bin: c2's change leaves most launches alone */
    c2 = c1;
    c2.tiny_max = 8;
    double ms1 = -1, ms1b = -1, ms2 = -1;
    run_one("hybrid, first executor", op, &ref, &c1, &ms1);
    SDT_CHECK(ms1 > 0, "the first executor compiled nothing (%.1f ms)", ms1);
    run_one("hybrid, second executor", op, &ref, &c1, &ms1b);
    SDT_CHECK(ms1b == 0, "the second executor of one configuration compiled (%.1f ms)", ms1b);
    const int within = units_within(op, &c2, &c1);
    run_one("hybrid tiny<=8 (shares units)", op, &ref, &c2, &ms2);
    SDT_CHECK(within ? ms2 == 0 : ms2 > 0, "tiny<=8: %s units of its own, compile %.1f ms",
              within ? "no" : "some", ms2);

    /* The small sweep of every family: precompiled once (distinct units), then every
     * executor finds all of its units in the memo. */
    sdi_sg_summary sm;
    sdi_sg_summarize(sdi_spgemm_operands_rowinfo(op), &sm);
    int n = 0;
    SDT_OK(sdi_spgemm_enumerate(&sm, 0, 1, 16, &cands, &n));
    SDT_OK(sdi_spgemm_precompile(g_ctx, sdi_spgemm_operands_rowinfo(op), cands, n));
    for (int q = 0; q < n; q++) {
        char what[64];
        double ms = -1;
        snprintf(what, sizeof what, "sweep #%d after precompile", q);
        if (run_one(what, op, &ref, &cands[q], &ms))
            SDT_CHECK(ms == 0, "%s compiled %.1f ms", what, ms);
    }
out:
    sdi_free(cands);
    sdi_spgemm_operands_destroy(op);
    sdi_reference_free(&ref);
    sd_csr_free(&a);
}

/* A stage's independent launches on side streams (the default) give the same C, bit for
 * bit, as every launch on the caller's stream (SPARSEDITTO_SG_STREAMS=0): small-integer
 * values make every sum exact, whatever the order. */
/* C on the host (out allocated here). */
static sd_status csr_to_host(const sd_device_csr *c, sd_csr *out)
{
    sd_status s = sdi_csr_alloc(out, c->rows, c->cols, c->nnz);
    if (s == SD_OK)
        s = sdi_copy_to_host(g_ctx, out->rowptr, c->rowptr, ((size_t)c->rows + 1) * 8, "C's row pointers");
    if (s == SD_OK && c->nnz > 0)
        s = sdi_copy_to_host(g_ctx, out->colind, c->colind, (size_t)c->nnz * 4, "C's columns");
    if (s == SD_OK && c->nnz > 0)
        s = sdi_copy_to_host(g_ctx, out->vals, c->vals, (size_t)c->nnz * 4, "C's values");
    return s;
}

/* Whether two host CSRs are equal, bit for bit. */
static int csr_same(const sd_csr *x, const sd_csr *y)
{
    return x->rows == y->rows && x->nnz == y->nnz &&
           memcmp(x->rowptr, y->rowptr, ((size_t)x->rows + 1) * 8) == 0 &&
           (x->nnz == 0 || (memcmp(x->colind, y->colind, (size_t)x->nnz * 4) == 0 &&
                            memcmp(x->vals, y->vals, (size_t)x->nnz * 4) == 0));
}

static int product_host(sdi_spgemm_operands *op, const sdi_spgemm_config *cfg, sd_csr *out, int *side)
{
    sdi_spgemm_exec *e = NULL;
    sd_device_csr c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    sd_status s = executor(op, cfg, &e);
    if (s == SD_OK) {
        *side = sdi_spgemm_exec_get_info(e)->side_streams;
        s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
    }
    if (s == SD_OK)
        s = csr_to_host(&c, out);
    SDT_CHECK(s == SD_OK, "product: %s", sd_last_error());
    sd_device_csr_free(&c);
    sdi_spgemm_exec_destroy(e);
    return s == SD_OK;
}

static void test_side_streams(void)
{
    sd_csr a, c_side, c_one;
    memset(&c_side, 0, sizeof c_side);
    memset(&c_one, 0, sizeof c_one);
    SDT_OK(sdi_gen("powerlaw:rows=20000,deg=8,alpha=2.0,max=3000", 77, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 78);
    sdi_spgemm_operands *op = NULL;
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &a, NULL, 0, &op));
    sdi_spgemm_config cfg;
    SDT_OK(sdi_spgemm_config_default(SDI_SPGEMM_HYBRID, &cfg));
    cfg.fuse = 0; /* a launch per bin: many independent launches per stage */
    int side1 = -1, side0 = -1;
    int ok1 = op && product_host(op, &cfg, &c_side, &side1);
    setenv("SPARSEDITTO_SG_STREAMS", "0", 1);
    sdi_config_reload();
    int ok0 = op && product_host(op, &cfg, &c_one, &side0);
    unsetenv("SPARSEDITTO_SG_STREAMS");
    sdi_config_reload();
    SDT_CHECK(side1 > 0 && side0 == 0, "side streams: %d by default, %d when switched off", side1, side0);
    if (ok1 && ok0) {
        int same = csr_same(&c_side, &c_one);
        SDT_CHECK(same, "C with side streams equals C on one stream (nnz %lld / %lld)",
                  (long long)c_side.nnz, (long long)c_one.nnz);
        printf("  side streams: %d, nnz(C) %lld, identical to one stream: %s\n", side1,
               (long long)c_one.nnz, same ? "yes" : "NO");
    }
    sd_csr_free(&c_side);
    sd_csr_free(&c_one);
    sdi_spgemm_operands_destroy(op);
    sd_csr_free(&a);
}

/* sdi_spgemm_exec_adopt: the schedule of sdi_spgemm_lower_config moves into the executor
 * (schedule emptied, nothing scheduled again; its units only read) and its product
 * validates; a schedule of another product, or one without its units, is refused by name
 * and stays the caller's. */
static void test_adopt(void)
{
    sd_csr a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    sdi_spgemm_operands *op = NULL, *op2 = NULL;
    sdi_lowered low, low2; /* schedule (sg) and units (sg_units) of each product */
    memset(&low, 0, sizeof low);
    memset(&low2, 0, sizeof low2);
    sdi_sg_schedule *sched = &low.sg, *sched2 = &low2.sg;
    sdi_spgemm_exec *e = NULL;
    sd_device_csr c;
    memset(&c, 0, sizeof c);
    SDT_OK(sdi_gen("powerlaw:rows=5000,deg=10", 77, &a));
    SDT_OK(sdi_gen("uniform:rows=3000,deg=6", 78, &b));
    if (a.rowptr == NULL || b.rowptr == NULL)
        goto out;
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 79);
    SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &a, NULL, 0, &op));
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &b, NULL, 0, &op2));
    if (op == NULL || op2 == NULL)
        goto out;
    sdi_spgemm_config cfg;
    SDT_OK(sdi_spgemm_config_default(SDI_SPGEMM_HYBRID, &cfg));
    SDT_OK(lower(op, &cfg, &low));
    SDT_OK(lower(op2, &cfg, &low2));
    SDT_CHECK(sched->m == a.rows && sched->nlaunches == low.sg_units.nkernels,
              "kept schedule: %d rows, %d launches, %d kernels", sched->m, sched->nlaunches,
              low.sg_units.nkernels);
    /* Refused: another product's schedule; a schedule without its lowering. */
    SDT_STATUS(sdi_spgemm_exec_adopt(g_ctx, op, sched2, &low2.sg_units, &e), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "not this product's") != NULL, "error: %s", sd_last_error());
    SDT_CHECK(e == NULL && sched2->m == b.rows && (sched2->nbinrows == 0 || sched2->binrows != NULL),
              "a refused schedule stays the caller's");
    SDT_STATUS(sdi_spgemm_exec_adopt(g_ctx, op, sched, NULL, &e), SD_ERR_INVALID_ARG);
    SDT_CHECK(e == NULL && sched->m == a.rows, "a schedule without its lowering is refused and kept");
    sdi_error_clear();
    /* Adopted: moved, and the product is right. */
    const int nlaunches = sched->nlaunches;
    SDT_OK(sdi_spgemm_exec_adopt(g_ctx, op, sched, &low.sg_units, &e));
    SDT_CHECK(sched->binrows == NULL && sched->m == 0, "the adopted schedule was not emptied");
    if (e == NULL)
        goto out;
    SDT_CHECK(sdi_spgemm_exec_schedule(e)->nlaunches == nlaunches, "the executor's schedule is not the one given");
    sd_status s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
    if (s == SD_OK)
        s = sdi_stream_sync(g_ctx, "the adopt test", NULL);
    SDT_CHECK(s == SD_OK, "run: %s", sd_last_error());
    if (s == SD_OK) {
        sdi_validation v;
        SDT_CHECK(sdi_spgemm_check(g_ctx, &ref, &c, &v) == SD_OK, "adopted executor: %s", v.reason);
    }
    printf("  adopted schedule: %d launches, nnz(C) %lld\n", nlaunches, (long long)c.nnz);
out:
    sd_device_csr_free(&c);
    sdi_spgemm_exec_destroy(e);
    sdi_lowered_free(&low);
    sdi_lowered_free(&low2);
    sdi_spgemm_operands_destroy(op);
    sdi_spgemm_operands_destroy(op2);
    sdi_reference_free(&ref);
    sd_csr_free(&a);
    sd_csr_free(&b);
}

/* The eager output (C at a bound of nnz(C) before the kernels) is only a
 * speed-up: where the device cannot hold the bound but can hold C, the product still
 * completes (C allocated after the scan) and validates; where it cannot hold C either, the
 * run fails with SD_ERR_OUT_OF_MEMORY and leaves nothing allocated. A stencil's rows have
 * about twice as many products as entries, so the bound is about twice nnz(C). */
static void test_eager_fallback(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=100", 91, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 92);
    sdi_spgemm_operands *op = NULL;
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &a, NULL, 0, &op));
    sdi_reference ref;
    memset(&ref, 0, sizeof ref);
    SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
    sdi_spgemm_config cfg;
    SDT_OK(sdi_spgemm_config_default(SDI_SPGEMM_HASH, &cfg));
    cfg.out_ub = 1;
    cfg.one_phase_max_u = 0; /* every row two-phase: the eager output, not one-phase staging */
    sdi_spgemm_exec *e = NULL;
    sd_status s = op ? executor(op, &cfg, &e) : SD_ERR_INVALID_ARG;
    SDT_CHECK(s == SD_OK, "executor: %s", sd_last_error());
    const sdi_sg_schedule *sch = e ? sdi_spgemm_exec_schedule(e) : NULL;
    SDT_CHECK(sch != NULL && !sch->out_ub && sch->eager_cap > 0, "an eager schedule (cap %lld)",
              sch ? (long long)sch->eager_cap : -1ll);
    const int64_t nnz_c = ref.c.nnz;
    const size_t crow_bytes = ((size_t)a.rows + 1) * 8, exact = (size_t)nnz_c * 4;
    const size_t limit = exact > crow_bytes ? exact : crow_bytes;
    if (sch != NULL && sch->eager_cap > 0) {
        SDT_CHECK((size_t)sch->eager_cap * 4 > limit, "the bound (%lld entries) exceeds nnz(C) = %lld",
                  (long long)sch->eager_cap, (long long)nnz_c);
        /* 1. The bound does not fit, C does: completes, valid, nothing left behind. */
        const long live0 = sdi_device_alloc_live();
        sdi_device_alloc_fail_above(limit);
        sd_device_csr c;
        memset(&c, 0, sizeof c);
        s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
        if (s == SD_OK)
            s = sdi_stream_sync(g_ctx, "the eager fallback", "a product");
        sdi_device_alloc_fail_above(0);
        SDT_CHECK(s == SD_OK, "bound refused, C fits: %s", sd_last_error());
        if (s == SD_OK) {
            sdi_validation v;
            s = sdi_spgemm_check(g_ctx, &ref, &c, &v);
            SDT_CHECK(s == SD_OK && c.nnz == nnz_c, "bound refused: C valid (%s)", v.reason);
        }
        sd_device_csr_free(&c);
        SDT_CHECK(sdi_device_alloc_live() == live0, "bound refused: %ld allocations left",
                  sdi_device_alloc_live() - live0);
        /* 2. Neither fits: SD_ERR_OUT_OF_MEMORY, nothing allocated, the executor usable. */
        sdi_device_alloc_fail_above(exact > crow_bytes ? exact - 4 : crow_bytes);
        memset(&c, 0, sizeof c);
        s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
        sdi_device_alloc_fail_above(0);
        if (exact > crow_bytes) {
            SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && c.colind == NULL && c.vals == NULL && c.rowptr == NULL,
                      "C does not fit: status %s, output cleared", sd_status_string(s));
            sdi_error_clear();
        }
        (void)sdi_stream_sync(g_ctx, "the eager fallback", "a failed product");
        sd_device_csr_free(&c);
        SDT_CHECK(sdi_device_alloc_live() == live0, "C refused: %ld allocations left",
                  sdi_device_alloc_live() - live0);
        /* 3. Then as before: the eager output, valid. */
        memset(&c, 0, sizeof c);
        s = sdi_spgemm_exec_run(e, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
        if (s == SD_OK)
            s = sdi_stream_sync(g_ctx, "the eager fallback", "a product");
        if (s == SD_OK) {
            sdi_validation v;
            s = sdi_spgemm_check(g_ctx, &ref, &c, &v);
        }
        SDT_CHECK(s == SD_OK, "after the refusals: %s", sd_last_error());
        sd_device_csr_free(&c);
        printf("  eager fallback: bound %lld entries, nnz(C) %lld: refused bound ok, refused C "
               "clean, then eager again\n", (long long)sch->eager_cap, (long long)nnz_c);
    }
    sdi_spgemm_exec_destroy(e);
    sdi_reference_free(&ref);
    sdi_spgemm_operands_destroy(op);
    sd_csr_free(&a);
}

/* The executor's CUDA graphs (the default) give the C of plain launches
 * (SPARSEDITTO_SG_GRAPH=0), bit for bit, call after call: with C's arrays at new addresses
 * (the previous C kept, so the nodes' arguments must follow) and at reused ones (the pool),
 * for stage 2 after the wait (two-phase: two graphs a call), in the graph of stage 1 and the
 * scan (eager output: one) and not at all (C at the upper bound: one), with the gather of
 * A·Aᵀ; the plain executor launched no graph. nnz(C) reaches the host through mapped memory
 * (the scan writes it; no copy). */
static void graph_case(const char *what, sdi_spgemm_operands *op, const sdi_spgemm_config *cfg)
{
    sdi_spgemm_exec *plain = NULL, *e = NULL;
    sd_device_csr c, keep;
    sd_csr want, got;
    memset(&c, 0, sizeof c);
    memset(&keep, 0, sizeof keep);
    memset(&want, 0, sizeof want);
    memset(&got, 0, sizeof got);
    setenv("SPARSEDITTO_SG_GRAPH", "0", 1);
    sdi_config_reload();
    sd_status s = executor(op, cfg, &plain);
    if (s == SD_OK)
        s = sdi_spgemm_exec_run(plain, g_ctx->stream, SDI_SG_ALLOC_HOOKS, &c);
    unsetenv("SPARSEDITTO_SG_GRAPH");
    sdi_config_reload();
    if (s == SD_OK)
        s = csr_to_host(&c, &want);
    sd_device_csr_free(&c);
    SDT_CHECK(s == SD_OK, "%s: plain launches: %s", what, sd_last_error());
    if (s == SD_OK)
        s = executor(op, cfg, &e);
    int same = 0, calls = 0;
    for (int call = 0; call < 5 && s == SD_OK; call++) {
        const sdi_sg_alloc alloc = call < 3 ? SDI_SG_ALLOC_HOOKS : SDI_SG_ALLOC_ASYNC;
        s = sdi_spgemm_exec_run(e, g_ctx->stream, alloc, &c);
        if (s == SD_OK)
            s = csr_to_host(&c, &got);
        if (s == SD_OK) {
            same += csr_same(&got, &want);
            calls++;
        }
        sd_csr_free(&got);
        memset(&got, 0, sizeof got);
        sd_device_csr_free(&keep);
        if (alloc == SDI_SG_ALLOC_HOOKS)
            keep = c; /* alive through the next call: new addresses */
        else
            sdi_spgemm_output_free(&c, g_ctx->stream);
        memset(&c, 0, sizeof c);
    }
    sd_device_csr_free(&keep);
    SDT_CHECK(s == SD_OK, "%s: graphs: %s", what, sd_last_error());
    const int64_t gl = e ? sdi_spgemm_exec_get_info(e)->graph_launches : 0;
    const int64_t pl = plain ? sdi_spgemm_exec_get_info(plain)->graph_launches : -1;
    const sdi_sg_schedule *sch = e ? sdi_spgemm_exec_schedule(e) : NULL;
    /* graphs a call launches: one where C is allocated ahead (at the bound: no stage 2;
     * eager: both stages in one graph), two for a two-phase call with stage-2 launches */
    int stage2 = 0;
    for (int l = 0; sch != NULL && l < sch->nlaunches; l++)
        stage2 |= sch->launches[l].stage == 2 && sch->launches[l].blocks > 0;
    const int per_call = sch != NULL && !sch->out_ub && sch->eager_cap == 0 && stage2 ? 2 : 1;
    SDT_CHECK(same == 5 && calls == 5, "%s: %d of 5 calls equal plain launches' C", what, same);
    SDT_CHECK(e != NULL && sdi_spgemm_exec_get_info(e)->nnz_mapped == 1,
              "%s: the scan writes nnz(C) to mapped host memory", what);
    SDT_CHECK(gl == 5 * per_call && pl == 0, "%s: %lld graphs launched, %d expected (plain executor: %lld)",
              what, (long long)gl, 5 * per_call, (long long)pl);
    printf("  graphs %-28s nnz(C) %8lld, %s, %lld graph launches in 5 calls: %s\n", what,
           (long long)want.nnz, sch == NULL ? "?" : sch->out_ub ? "ub-out" : sch->eager_cap > 0 ? "eager" : "two-phase",
           (long long)gl, same == 5 ? "identical" : "DIFFERENT");
    sd_csr_free(&want);
    sdi_spgemm_exec_destroy(e);
    sdi_spgemm_exec_destroy(plain);
}

static void test_graphs(void)
{
    sd_csr a, r, q;
    SDT_OK(sdi_gen("powerlaw:rows=20000,deg=8,alpha=2.0,max=3000", 81, &a));
    sdi_gen_values(&a, SDI_VALUES_SMALL_INT, 82);
    SDT_OK(sdi_gen("uniform:rows=3000,cols=5000,deg=12", 83, &r));
    sdi_gen_values(&r, SDI_VALUES_SMALL_INT, 84);
    SDT_OK(sdi_gen("uniform:rows=4000,cols=4000,deg=4", 85, &q));
    sdi_gen_values(&q, SDI_VALUES_SMALL_INT, 86);
    sdi_spgemm_operands *op = NULL, *opt = NULL, *opq = NULL;
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &a, NULL, 0, &op));
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &r, NULL, 1, &opt));
    SDT_OK(sdi_spgemm_operands_create(g_ctx, &q, NULL, 0, &opq));
    static const struct {
        const char *what;
        sdi_spgemm_family f;
        int fuse, out_ub, one_phase_max_u, operand; /* 0 power-law, 1 A.At, 2 uniform */
    } cases[] = {
        {"hash, two-phase", SDI_SPGEMM_HASH, -1, 0, 0, 0},
        {"hybrid, no fusion, eager", SDI_SPGEMM_HYBRID, 0, 1, 0, 0},
        {"smem tiled, upper bound", SDI_SPGEMM_TILED, -1, 1, -1, 2},
        {"dense stripe", SDI_SPGEMM_DENSE, -1, 0, -1, 0},
        {"hash A.At, gather", SDI_SPGEMM_HASH, -1, 0, 0, 1},
    };
    sdi_spgemm_operands *ops[3] = {op, opt, opq};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && op && opt && opq; i++) {
        sdi_spgemm_config cfg;
        SDT_OK(sdi_spgemm_config_default(cases[i].f, &cfg));
        if (cases[i].fuse >= 0)
            cfg.fuse = cases[i].fuse;
        cfg.out_ub = cases[i].out_ub;
        if (cases[i].one_phase_max_u >= 0)
            cfg.one_phase_max_u = cases[i].one_phase_max_u;
        if (cases[i].operand == 1)
            cfg.bt_gather = 1;
        graph_case(cases[i].what, ops[cases[i].operand], &cfg);
    }
    sdi_spgemm_operands_destroy(op);
    sdi_spgemm_operands_destroy(opt);
    sdi_spgemm_operands_destroy(opq);
    sd_csr_free(&a);
    sd_csr_free(&r);
    sd_csr_free(&q);
}

int main(void)
{
    sdt_init("test_spgemm_units");
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    sdi_config_reload();
    sd_context_options o = {.device = 0, .cache_dir = NULL, .verbose = 0};
    sd_status s = sd_context_create(&o, &g_ctx);
    if (s != SD_OK) {
        char why[512];
        snprintf(why, sizeof why, "no usable GPU (%s)", sd_last_error());
        return sdt_skip(why);
    }
    SDT_RUN(test_shared_units);
    SDT_RUN(test_side_streams);
    SDT_RUN(test_adopt);
    SDT_RUN(test_eager_fallback);
    SDT_RUN(test_graphs);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
