/* tests/gpu/test_spmm.c: every SpMM template and every ParamSpMM ⟨W, F, V, S⟩ (with the
 * sub-warp groups) validated on the device against the CPU reference, on every generator
 * family and edge case (empty rows, 1×1, rectangular, one huge row, no entries), at K ∈ {1, 3, 8, 32,
 * 33, 128, 256, 300}: small-integer values compared exactly (a dropped or doubled product
 * cannot hide), C poisoned with NaN before each run (an unwritten output cannot hide),
 * each program run twice (workspace counters and zeroing re-armed). Plus: uniform values
 * under the bound of docs/ARCHITECTURE.md "Validation", value updates, CUDA-graph replay,
 * bitwise reproducibility of
 * the deterministic dataflows, real matrices, and the tensor-core template on inputs that
 * plain TF32 would fail (test_bsr_tc). Skipped (exit 77) without a device.
 * SD_SPMM_TEST_QUICK=1 runs a reduced set (K ∈ {8, 33, 256}, fewer families). */
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "gen/gen.h"
#include "plan/families/spmm_shared.h"
#include "runtime/executable.h"
#include "runtime/runtime.h"
#include "plan/spmm.h"
#include "sdt.h"
#include "spmm_tc_data.h"

/* ------------------------------------------------------------------ one configuration
 * Lowered through its family, instantiated as the runtime's executable. */
static sd_status lower_cfg(const sd_csr *a, const sdi_spmm_config *c, sdi_lowered *l)
{
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(a, &st);
    return sdi_spmm_lower_config(a, &st, c, l);
}

static sd_context *g_ctx;
static int g_quick;
static long g_runs;

static const char *const families[] = {
    "stencil2d:n=23",
    "banded:n=700,bw=9,fill=0.7",
    "blockdiag:n=512,b=16",
    "uniform:rows=900,cols=410,deg=7",
    "uniform:rows=64,cols=2000,deg=90",
    "powerlaw:rows=1500,deg=6,alpha=1.7",
    "rmat:scale=10,ef=8",
    "bimodal:rows=1200,short=3,long=700,frac=0.03",
    "knn:n=1000,k=7",
    "stencil3d27:n=7",
};
#define NFAM ((int)(sizeof families / sizeof families[0]))
#define NEDGE 6

/* Edge cases: 1×1; 6×9 with empty rows (first and last too); one row of 20000 entries
 * among 300 rows of 0–2; 1×4000 (one long row, rectangular); 5000×3 (tall); 40×30 without
 * entries (every output row zero). */
static sd_status edge(int e, sd_csr *out, char *label, size_t cap)
{
    static const int rows[NEDGE] = {1, 6, 300, 1, 5000, 40};
    static const int cols[NEDGE] = {1, 9, 20011, 4000, 3, 30};
    static const char *names[NEDGE] = {"1x1", "empty rows", "one huge row", "1x4000",
                                       "5000x3", "no entries"};
    snprintf(label, cap, "edge: %s", names[e]);
    sdi_coo c;
    sd_status s = sdi_coo_init(&c, rows[e], cols[e], 64);
    uint32_t h = 12345;
#define NEXT() (h = h * 1103515245u + 12345u, (h >> 16) & 0x7fff)
    switch (e) {
    case 0: s = sdi_coo_push(&c, 0, 0, 2.0f); break;
    case 1:
        for (int i = 1; i < 5 && s == SD_OK; i += 2)
            for (int j = 0; j < 9 && s == SD_OK; j += i)
                s = sdi_coo_push(&c, i, j, (float)((i + j) % 5) - 2.0f);
        break;
    case 2:
        for (int j = 0; j < 20000 && s == SD_OK; j++)
            s = sdi_coo_push(&c, 150, j, (float)(j % 5) - 2.0f);
        for (int i = 0; i < 300 && s == SD_OK; i++)
            for (int q = 0; q < i % 3 && s == SD_OK; q++)
                s = sdi_coo_push(&c, i, (int)(NEXT() % 20011), 1.0f);
        break;
    case 3:
        for (int j = 0; j < 4000 && s == SD_OK; j += 1 + (int)(NEXT() % 3))
            s = sdi_coo_push(&c, 0, j, (float)(NEXT() % 5) - 2.0f);
        break;
    case 4:
        for (int i = 0; i < 5000 && s == SD_OK; i++)
            if (i % 7 != 3)
                s = sdi_coo_push(&c, i, (int)(NEXT() % 3), (float)(i % 5) - 2.0f);
        break;
    default: break;
    }
#undef NEXT
    if (s == SD_OK)
        s = sdi_coo_to_csr(&c, out, NULL);
    sdi_coo_free(&c);
    return s;
}

static sd_status load_matrix(int m, sd_csr *a, char *label, size_t cap)
{
    if (m < NFAM) {
        snprintf(label, cap, "%s", families[m]);
        sd_status s = sdi_gen(families[m], sdt_seed + (unsigned)m, a);
        if (s == SD_OK)
            sdi_gen_values(a, SDI_VALUES_SMALL_INT, sdt_seed + 100u + (unsigned)m);
        return s;
    }
    return edge(m - NFAM, a, label, cap);
}

/* ------------------------------------------------------------------ one run */

static sd_status poison(float *d, size_t bytes)
{
    if (bytes == 0)
        return SD_OK;
    return sdi_cuda_status(g_ctx, cudaMemsetAsync(d, 0xff, bytes, g_ctx->stream), "poisoning C",
                           NULL);
}

/* Lowers, loads, runs twice (C poisoned before each) and validates each result.
 * Returns 1 when everything passed. */
static int run_config(const sd_csr *a, const char *label, const sdi_spmm_config *cfg,
                      const float *d_b, float *d_c, const sdi_reference *ref, bool graph)
{
    char desc[192];
    sdi_spmm_config_describe(cfg, desc, sizeof desc);
    sdi_lowered l;
    sdi_executable ld;
    memset(&ld, 0, sizeof ld);
    sd_status s = lower_cfg(a, cfg, &l);
    if (s == SD_ERR_UNSUPPORTED) { /* a format limit (padding), named: not a failure */
        sdi_error_clear();
        return 1;
    }
    SDT_CHECK(s == SD_OK, "%s on %s: lowering: %s", desc, label, sd_last_error());
    if (s != SD_OK)
        return 0;
    s = sdi_exe_create_program(g_ctx, &l, graph, &ld); /* the lowering moves into ld.low */
    SDT_CHECK(s == SD_OK, "%s on %s: load: %s", desc, label, sd_last_error());
    int ok = s == SD_OK;
    size_t cbytes = (size_t)a->rows * (size_t)cfg->k * 4;
    for (int rep = 0; rep < 2 && ok; rep++) {
        sdi_validation val;
        memset(&val, 0, sizeof val);
        s = poison(d_c, cbytes);
        if (s == SD_OK)
            s = sdi_exe_run(g_ctx, &ld, d_b, d_c, g_ctx->stream);
        if (s == SD_OK)
            s = sdi_stream_sync(g_ctx, "spmm test run", ld.low.kname[0]);
        if (s == SD_OK)
            s = sdi_check_dense_output(g_ctx, ref, d_c, &val);
        g_runs++;
        if (s != SD_OK) {
            ok = 0;
            SDT_CHECK(0, "%s on %s (%d x %d, nnz %lld) run %d: %s [kernel %s, %d launches, "
                      "regs %d/%d, local %zu B]",
                      desc, label, a->rows, a->cols, (long long)a->nnz, rep + 1,
                      val.reason[0] ? val.reason : sd_last_error(), ld.low.kname[0], ld.low.nlaunches,
                      ld.num_regs[0], ld.num_regs[1], ld.local_bytes[0]);
        }
    }
    sdi_exe_free(&ld);
    sdi_lowered_free(&l);
    return ok;
}

/* The configurations of one (matrix, K): each template's sweep (level 1), the three split
 * dataflows at two thresholds, forced block / window shapes, the row-wise templates at the
 * light register cap, and every ParamSpMM configuration. */
static sd_status configs_for(const sd_csr *a, int k, sdi_spmm_config **out, int *n)
{
    *out = NULL;
    *n = 0;
    sdi_spmm_config *sweep = NULL, *pc = NULL;
    int ns = 0, np = 0;
    sd_status s = sdi_spmm_enumerate(a, k, ~(1u << SDI_SPMM_PCSR), g_quick ? 0 : 1, 0, &sweep,
                                     &ns);
    if (s == SD_OK)
        s = sdi_spmm_enumerate_pcsr(a, k, 1, &pc, &np);
    sdi_spmm_config *all = NULL;
    if (s == SD_OK) {
        all = sdi_malloc_array((size_t)(ns + np + 15), sizeof *all); /* 6 split + 7 forced */
        if (all == NULL)
            s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "configs");
    }
    if (s == SD_OK) {
        int c = 0;
        for (int i = 0; i < ns; i++)
            all[c++] = sweep[i];
        for (int i = 0; i < np; i++)
            if (!g_quick || pc[i].warps == 4 || pc[i].pcsr_group < 32)
                all[c++] = pc[i];
        sdi_spmm_stats st;
        sdi_spmm_stats_compute(a, &st);
        static const int thr[2] = {16, 96};
        for (int t = 0; t < 2; t++)
            for (int mode = 0; mode < 4; mode++) {
                sdi_spmm_config x;
                if (sdi_spmm_config_default(SDI_SPMM_CSR_SPLIT, k, &st, &x) != SD_OK)
                    continue;
                x.split_threshold = thr[t];
                x.chunk = t == 0 ? 16 : 32;
                x.split_mode = mode;
                if (mode == SDI_SPLIT_SEGMENTS || mode == SDI_SPLIT_SEGATOMIC) {
                    /* segments of 3 and 32 entries */
                    x.nzpar = 1;
                    x.chunk = x.split_threshold = t == 0 ? 3 : 32;
                }
                if (sdi_spmm_config_check(&x, &st) == SD_OK)
                    all[c++] = x;
            }
        /* BSR / blocked-ELL with b = 4, tensor-core tiles and column windows whatever the
         * padding or density (format limits permitting: beyond them the lowering says so) */
        static const int forced[] = {SDI_SPMM_BSR, SDI_SPMM_BELL, SDI_SPMM_COL_WINDOW,
                                     SDI_SPMM_BSR_TC};
        for (int f = 0; f < 4; f++) {
            sdi_spmm_config x;
            if (sdi_spmm_config_default(forced[f], k, &st, &x) == SD_OK)
                all[c++] = x;
        }
        /* the light register cap (32, 8 floats of B in flight) of the row-wise templates,
         * which their sweeps offer only from 50,000 rows */
        static const int light[] = {SDI_SPMM_CSR_ROW, SDI_SPMM_CSR_WINDOW, SDI_SPMM_CSR_SPLIT};
        for (int f = 0; f < 3; f++) {
            sdi_spmm_config x;
            if (sdi_spmm_config_default(light[f], k, &st, &x) != SD_OK)
                continue;
            x.regcap = 32;
            if (sdi_spmm_config_check(&x, &st) == SD_OK)
                all[c++] = x;
        }
        sdi_error_clear();
        *out = all;
        *n = c;
        all = NULL;
    }
    sdi_free(sweep);
    sdi_free(pc);
    sdi_free(all);
    return s;
}

/* Lowers every configuration of every (matrix, K) once and compiles the distinct kernels
 * in parallel (the runs below then hit the context's memo). */
static void precompile_all(const int *ks, int nk)
{
    int cap = 4096, n = 0;
    sdi_lowered *ls = sdi_calloc((size_t)cap, sizeof *ls);
    const sdi_lowered **ptr = sdi_calloc((size_t)cap, sizeof *ptr);
    if (!ls || !ptr) {
        sdi_free(ls);
        sdi_free(ptr);
        return;
    }
    double t0 = sdi_now();
    for (int m = 0; m < NFAM + NEDGE; m++) {
        if (g_quick && m < NFAM && m % 2 == 1)
            continue;
        sd_csr a;
        char label[160];
        if (load_matrix(m, &a, label, sizeof label) != SD_OK)
            continue;
        for (int q = 0; q < nk; q++) {
            sdi_spmm_config *cfgs = NULL;
            int nc = 0;
            if (configs_for(&a, ks[q], &cfgs, &nc) != SD_OK)
                continue;
            for (int i = 0; i < nc && n < cap; i++) {
                sdi_lowered l;
                if (lower_cfg(&a, &cfgs[i], &l) != SD_OK) {
                    sdi_error_clear();
                    continue;
                }
                bool dup = false;
                for (int j = 0; j < n && !dup; j++)
                    dup = strcmp(ls[j].kname[0], l.kname[0]) == 0;
                /* keep the description only (formats are not needed to compile) */
                for (int j = 0; j < l.narrays; j++) {
                    if (l.arr[j].owned)
                        sdi_free(l.arr[j].host);
                    sdi_free(l.arr[j].src);
                }
                l.narrays = 0;
                if (!dup) {
                    ls[n] = l;
                    ptr[n] = &ls[n];
                    n++;
                }
            }
            sdi_free(cfgs);
        }
        sd_csr_free(&a);
    }
    int failed = 0;
    double wall = 0;
    sd_status s = sdi_lowered_precompile(g_ctx, ptr, n, &failed, &wall);
    SDT_CHECK(s == SD_OK && failed == 0, "precompiling: %d of %d kernels failed (%s)", failed, n,
              sd_last_error());
    printf("  %d distinct kernels compiled in %.1f s (%.1f s with lowering)\n", n, wall,
           sdi_now() - t0);
    sdi_free(ls);
    sdi_free(ptr);
}

static void test_all_templates_exact(void)
{
    static const int ks_full[] = {1, 3, 8, 32, 33, 128, 256, 300};
    static const int ks_quick[] = {8, 33, 256};
    const int *ks = g_quick ? ks_quick : ks_full;
    int nk = g_quick ? 3 : 8;
    int per_template_ok[SDI_SPMM_NTEMPLATES] = {0}, per_template_fail[SDI_SPMM_NTEMPLATES] = {0};
    precompile_all(ks, nk);
    double t0 = sdi_now();
    for (int m = 0; m < NFAM + NEDGE; m++) {
        if (g_quick && m < NFAM && m % 2 == 1)
            continue;
        sd_csr a;
        char label[160];
        sd_status s = load_matrix(m, &a, label, sizeof label);
        SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
        if (s != SD_OK)
            continue;
        for (int q = 0; q < nk; q++) {
            int k = ks[q];
            size_t nb = (size_t)a.cols * (size_t)k, nc = (size_t)a.rows * (size_t)k;
            float *b = sdi_malloc_array(nb > 0 ? nb : 1, sizeof *b);
            float *d_b = NULL, *d_c = NULL;
            sdi_reference ref;
            memset(&ref, 0, sizeof ref);
            if (b == NULL) {
                SDT_CHECK(0, "out of host memory");
                break;
            }
            sdi_gen_dense(b, (int64_t)nb, SDI_VALUES_SMALL_INT, sdt_seed + (unsigned)k);
            s = sdi_reference_dense(&a, SD_OP_SPMM, b, k, 1, &ref);
            if (s == SD_OK)
                s = sdi_device_upload(g_ctx, (void **)&d_b, b, nb * 4, "B");
            if (s == SD_OK)
                s = sdi_device_malloc(g_ctx, (void **)&d_c, nc * 4, "C");
            SDT_CHECK(s == SD_OK, "%s K=%d: setup: %s", label, k, sd_last_error());
            sdi_spmm_config *cfgs = NULL;
            int n = 0;
            if (s == SD_OK)
                s = configs_for(&a, k, &cfgs, &n);
            for (int i = 0; i < n && s == SD_OK; i++) {
                int ok = run_config(&a, label, &cfgs[i], d_b, d_c, &ref, false);
                if (ok)
                    per_template_ok[cfgs[i].tmpl]++;
                else
                    per_template_fail[cfgs[i].tmpl]++;
                if (g_ctx->broken) {
                    SDT_CHECK(0, "the CUDA context is broken (%s): stopping",
                              g_ctx->broken_reason);
                    s = SD_ERR_CUDA;
                }
            }
            sdi_free(cfgs);
            sdi_free(b);
            sdi_device_free(d_b);
            sdi_device_free(d_c);
            sdi_reference_free(&ref);
            if (g_ctx->broken)
                break;
        }
        sd_csr_free(&a);
        if (g_ctx->broken)
            break;
    }
    for (int t = 0; t < SDI_SPMM_NTEMPLATES; t++) {
        printf("  %-10s %5d configurations passed, %d failed\n", sdi_spmm_template_name(t),
               per_template_ok[t], per_template_fail[t]);
        SDT_CHECK(per_template_ok[t] > 0, "template %s never ran", sdi_spmm_template_name(t));
    }
    printf("  %ld validated runs in %.1f s\n", g_runs, sdi_now() - t0);
}

/* Uniform values under the bound of docs/ARCHITECTURE.md "Validation"; value updates;
 * graphs; reproducibility. */
static void test_uniform_values_graph_update(void)
{
    static const int ks[] = {1, 32, 33, 256};
    for (int m = 0; m < NFAM; m += 3) {
        sd_csr a;
        sd_status s = sdi_gen(families[m], sdt_seed + 7u, &a);
        SDT_CHECK(s == SD_OK, "%s", sd_last_error());
        if (s != SD_OK)
            continue;
        sdi_gen_values(&a, SDI_VALUES_UNIFORM, sdt_seed);
        sdi_spmm_stats st;
        sdi_spmm_stats_compute(&a, &st);
        for (int q = 0; q < 4; q++) {
            int k = ks[q];
            size_t nb = (size_t)a.cols * k, nc = (size_t)a.rows * k;
            float *b = sdi_malloc_array(nb, sizeof *b);
            float *h1 = sdi_malloc_array(nc, sizeof *h1), *h2 = sdi_malloc_array(nc, sizeof *h2);
            float *newv = sdi_malloc_array((size_t)a.nnz, sizeof *newv);
            float *d_b = NULL, *d_c = NULL;
            sdi_reference ref, ref2;
            memset(&ref, 0, sizeof ref);
            memset(&ref2, 0, sizeof ref2);
            if (!b || !h1 || !h2 || !newv) {
                SDT_CHECK(0, "out of host memory");
                sdi_free(b); sdi_free(h1); sdi_free(h2); sdi_free(newv);
                break;
            }
            sdi_gen_dense(b, (int64_t)nb, SDI_VALUES_UNIFORM, sdt_seed + 11u);
            s = sdi_reference_dense(&a, SD_OP_SPMM, b, k, 0, &ref);
            if (s == SD_OK)
                s = sdi_device_upload(g_ctx, (void **)&d_b, b, nb * 4, "B");
            if (s == SD_OK)
                s = sdi_device_malloc(g_ctx, (void **)&d_c, nc * 4, "C");
            /* New values: the reference of the updated matrix. */
            sd_csr a2 = a;
            for (int64_t e = 0; e < a.nnz; e++)
                newv[e] = 0.25f * (float)((e % 9) - 4);
            a2.vals = newv;
            if (s == SD_OK)
                s = sdi_reference_dense(&a2, SD_OP_SPMM, b, k, 0, &ref2);
            SDT_CHECK(s == SD_OK, "setup: %s", sd_last_error());
            /* every template's default, then csr_split's segments (t = NTEMPLATES) and
             * segments with atomic sums (NTEMPLATES + 1: the measure's repeated runs and the
             * value update check that the sum slots are left zero) */
            for (int tt = 0; tt <= SDI_SPMM_NTEMPLATES + 1 && s == SD_OK; tt++) {
                const int t = tt >= SDI_SPMM_NTEMPLATES ? SDI_SPMM_CSR_SPLIT : tt;
                sdi_spmm_config cfg;
                if (sdi_spmm_config_default(t, k, &st, &cfg) != SD_OK) {
                    sdi_error_clear();
                    continue;
                }
                if (t == SDI_SPMM_CSR_SPLIT) {
                    cfg.split_threshold = cfg.chunk = 16; /* split often */
                    if (tt >= SDI_SPMM_NTEMPLATES) {
                        cfg.split_mode = tt == SDI_SPMM_NTEMPLATES ? SDI_SPLIT_SEGMENTS
                                                                   : SDI_SPLIT_SEGATOMIC;
                        cfg.nzpar = 1;
                    }
                }
                if (t == SDI_SPMM_PCSR) {
                    cfg.pcsr_s = 1;
                    cfg.pcsr_bound = 8;
                }
                char desc[192];
                sdi_spmm_config_describe(&cfg, desc, sizeof desc);
                sdi_lowered l;
                sdi_executable ld;
                memset(&ld, 0, sizeof ld);
                sd_status e = lower_cfg(&a, &cfg, &l);
                if (e == SD_ERR_UNSUPPORTED) {
                    sdi_error_clear();
                    continue;
                }
                SDT_CHECK(e == SD_OK, "%s: %s", desc, sd_last_error());
                if (e != SD_OK)
                    continue;
                e = sdi_exe_create_program(g_ctx, &l, true, &ld); /* graphs for 2-launch programs */
                sdi_validation val;
                memset(&val, 0, sizeof val);
                sdi_timing tm;
                if (e == SD_OK)
                    e = poison(d_c, nc * 4);
                if (e == SD_OK)
                    e = sdi_exe_measure(g_ctx, &ld, d_b, d_c, &ref, &val, desc, &tm);
                SDT_CHECK(e == SD_OK, "%s on %s K=%d (uniform values): %s", desc, families[m], k,
                          val.reason[0] ? val.reason : sd_last_error());
                /* Deterministic programs are bitwise reproducible run to run. */
                if (e == SD_OK && !ld.low.atomics) {
                    e = sdi_copy_to_host(g_ctx, h1, d_c, nc * 4, "C");
                    if (e == SD_OK)
                        e = sdi_exe_run(g_ctx, &ld, d_b, d_c, g_ctx->stream);
                    if (e == SD_OK)
                        e = sdi_copy_to_host(g_ctx, h2, d_c, nc * 4, "C");
                    SDT_CHECK(e == SD_OK && memcmp(h1, h2, nc * 4) == 0,
                              "%s on %s K=%d: deterministic program not reproducible", desc,
                              families[m], k);
                }
                /* Value update: the executable follows the new values; run, check against the new
                 * reference. */
                if (e == SD_OK) {
                    sd_csr an = a; /* the same pattern with the new values */
                    an.vals = newv;
                    e = sdi_exe_update_values(g_ctx, &ld, &an, NULL);
                    if (e == SD_OK)
                        e = poison(d_c, nc * 4);
                    if (e == SD_OK)
                        e = sdi_exe_run(g_ctx, &ld, d_b, d_c, g_ctx->stream);
                    if (e == SD_OK)
                        e = sdi_check_dense_output(g_ctx, &ref2, d_c, &val);
                    SDT_CHECK(e == SD_OK, "%s on %s K=%d after a value update: %s", desc,
                              families[m], k, val.reason[0] ? val.reason : sd_last_error());
                }
                sdi_exe_free(&ld);
                sdi_lowered_free(&l);
            }
            sdi_free(b);
            sdi_free(h1);
            sdi_free(h2);
            sdi_free(newv);
            sdi_device_free(d_b);
            sdi_device_free(d_c);
            sdi_reference_free(&ref);
            sdi_reference_free(&ref2);
        }
        sd_csr_free(&a);
    }
}

/* The tensor-core template (bsr_tc) on its own inputs: dense 16×16 and 8×8 blocks, the
 * cancellation input of spmm_tc_data.h (empty block rows, rectangular, partial tiles)
 * under the bound of docs/ARCHITECTURE.md "Validation", which plain TF32 breaks
 * (tests/cpu/test_spmm_tc.c shows it
 * on an emulation), no entries, 1×1; tiles of 8 and 16 rows, every K sub-tiling. */
static void test_bsr_tc(void)
{
    static const int ks[] = {1, 7, 32, 128, 256};
    enum { NM = 6 };
    int passed = 0, failed = 0;
    for (int m = 0; m < NM; m++) {
        sd_csr a;
        char label[96];
        sd_status s;
        bool cancel = m == 2 || m == 3;
        switch (m) {
        case 0:
        case 1:
            snprintf(label, sizeof label, m == 0 ? "blockdiag:n=512,b=16" : "blockdiag:n=200,b=8");
            s = sdi_gen(label, sdt_seed + 31u, &a);
            if (s == SD_OK)
                sdi_gen_values(&a, SDI_VALUES_SMALL_INT, sdt_seed + 32u);
            break;
        case 2:
        case 3:
            snprintf(label, sizeof label, "cancellation %s", m == 2 ? "333x190 b=16" : "190x333 b=8");
            s = tc_cancel_matrix(m == 2 ? 333 : 190, m == 2 ? 190 : 333, m == 2 ? 16 : 8,
                                 sdt_seed + (unsigned)m, &a);
            break;
        default: {
            sdi_coo c;
            snprintf(label, sizeof label, m == 4 ? "70x45 no entries" : "1x1");
            s = sdi_coo_init(&c, m == 4 ? 70 : 1, m == 4 ? 45 : 1, 4);
            if (s == SD_OK && m == 5)
                s = sdi_coo_push(&c, 0, 0, -2.0f);
            if (s == SD_OK)
                s = sdi_coo_to_csr(&c, &a, NULL);
            sdi_coo_free(&c);
            break;
        }
        }
        SDT_CHECK(s == SD_OK, "%s: %s", label, sd_last_error());
        if (s != SD_OK)
            continue;
        sdi_spmm_stats st;
        sdi_spmm_stats_compute(&a, &st);
        for (int q = 0; q < 5 && !g_ctx->broken; q++) {
            int k = ks[q];
            size_t nb = (size_t)a.cols * (size_t)k, nc = (size_t)a.rows * (size_t)k;
            float *b = sdi_malloc_array(nb > 0 ? nb : 1, sizeof *b);
            float *d_b = NULL, *d_c = NULL;
            sdi_reference ref;
            memset(&ref, 0, sizeof ref);
            if (b == NULL) {
                SDT_CHECK(0, "out of host memory");
                break;
            }
            if (cancel)
                tc_cancel_dense(b, (int64_t)nb, sdt_seed + 7u);
            else
                sdi_gen_dense(b, (int64_t)nb, SDI_VALUES_SMALL_INT, sdt_seed + (unsigned)k);
            s = sdi_reference_dense(&a, SD_OP_SPMM, b, k, cancel ? 0 : 1, &ref);
            if (s == SD_OK)
                s = sdi_device_upload(g_ctx, (void **)&d_b, b, nb * 4, "B");
            if (s == SD_OK)
                s = sdi_device_malloc(g_ctx, (void **)&d_c, nc * 4, "C");
            SDT_CHECK(s == SD_OK, "%s K=%d: setup: %s", label, k, sd_last_error());
            for (int bm = 8; bm <= 16 && s == SD_OK; bm += 8)
                for (int nt = 1; nt <= 4 && s == SD_OK; nt *= 2)
                    for (int w = 4; w <= 8; w += 4) {
                        sdi_spmm_config cfg;
                        if (sdi_spmm_config_default(SDI_SPMM_BSR_TC, k, &st, &cfg) != SD_OK)
                            break;
                        /* quick: 4 warps, the default sub-tiling and nt = 1 */
                        if (g_quick && (w == 8 || (nt != cfg.coarsen && nt != 1)))
                            continue;
                        cfg.block = bm;
                        cfg.coarsen = nt;
                        cfg.warps = w;
                        /* these inputs are within the padding limit: lowering must work */
                        sdi_lowered l;
                        sd_status e = lower_cfg(&a, &cfg, &l);
                        SDT_CHECK(e == SD_OK, "%s K=%d b=%d: lowering: %s", label, k, bm,
                                  sd_last_error());
                        sdi_lowered_free(&l);
                        if (e != SD_OK)
                            continue;
                        if (run_config(&a, label, &cfg, d_b, d_c, &ref, false))
                            passed++;
                        else
                            failed++;
                    }
            sdi_free(b);
            sdi_device_free(d_b);
            sdi_device_free(d_c);
            sdi_reference_free(&ref);
        }
        sd_csr_free(&a);
    }
    printf("  bsr_tc: %d configurations passed, %d failed\n", passed, failed);
    SDT_CHECK(passed > 0 && failed == 0, "bsr_tc: %d passed, %d failed", passed, failed);
}

/* Real matrices: each template's default at K = 32 and 33 (values from the file). */
static void test_real_matrices(void)
{
    static const char *names[] = {"bcsstk13", "dblp-2010", "Chem97Zt", "wiki-Vote", "rajat01",
                                  "well1033"};
    int done = 0;
    for (int i = 0; i < 6; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/suitesparse/%s.mtx.gz", SD_MATRICES_DIR, names[i]);
        sd_csr a;
        if (sd_csr_read(path, &a) != SD_OK) {
            printf("  (%s not readable: %s)\n", path, sd_last_error());
            continue;
        }
        sdi_spmm_stats st;
        sdi_spmm_stats_compute(&a, &st);
        for (int k = 32; k <= 33; k++) {
            size_t nb = (size_t)a.cols * k, nc = (size_t)a.rows * k;
            float *b = sdi_malloc_array(nb, sizeof *b);
            float *d_b = NULL, *d_c = NULL;
            sdi_reference ref;
            memset(&ref, 0, sizeof ref);
            if (b == NULL)
                break;
            sdi_gen_dense(b, (int64_t)nb, SDI_VALUES_UNIFORM, 99);
            sd_status s = sdi_reference_dense(&a, SD_OP_SPMM, b, k, 0, &ref);
            if (s == SD_OK)
                s = sdi_device_upload(g_ctx, (void **)&d_b, b, nb * 4, "B");
            if (s == SD_OK)
                s = sdi_device_malloc(g_ctx, (void **)&d_c, nc * 4, "C");
            for (int t = 0; t < SDI_SPMM_NTEMPLATES && s == SD_OK; t++) {
                sdi_spmm_config cfg;
                if (sdi_spmm_config_default(t, k, &st, &cfg) != SD_OK) {
                    sdi_error_clear();
                    continue;
                }
                done += run_config(&a, names[i], &cfg, d_b, d_c, &ref, false);
            }
            sdi_free(b);
            sdi_device_free(d_b);
            sdi_device_free(d_c);
            sdi_reference_free(&ref);
        }
        sd_csr_free(&a);
    }
    printf("  %d real-matrix runs passed\n", done);
}

int main(void)
{
    sdt_init("test_spmm");
    g_quick = getenv("SD_SPMM_TEST_QUICK") != NULL;
    sd_status s = sd_context_create(NULL, &g_ctx);
    if (s == SD_ERR_NO_DEVICE)
        return sdt_skip(sd_last_error());
    if (s != SD_OK) {
        fprintf(stderr, "sd_context_create: %s\n", sd_last_error());
        return 1;
    }
    printf("# device: %s (sm_%d%d)%s\n", g_ctx->props.name, g_ctx->props.cc_major,
           g_ctx->props.cc_minor, g_quick ? ", quick set" : "");
    SDT_RUN(test_all_templates_exact);
    if (!g_ctx->broken)
        SDT_RUN(test_bsr_tc);
    if (!g_ctx->broken)
        SDT_RUN(test_uniform_values_graph_update);
    if (!g_ctx->broken)
        SDT_RUN(test_real_matrices);
    sd_context_destroy(g_ctx);
    return sdt_finish();
}
