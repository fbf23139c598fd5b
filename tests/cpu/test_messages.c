/* tests/cpu/test_messages.c: messages say what happened and name the cause. The
 * no-device cause by case (no driver, a driver older than the runtime, no GPU); a
 * cached-kernel request with the cache off refused before anything is allocated;
 * configuration texts and ranking reasons fit their buffers whole; a corpus list entry
 * whose file name does not fit is refused, not cut; a SpGEMM whose C cannot fit the
 * device is refused up front, naming the products, C's bounds and the memory, and one
 * whose C fits is not. */
#include <limits.h>

#include "analysis/analysis.h"
#include "gen/gen.h"
#include "model/rank.h"
#include "runtime/runtime.h"
#include "sdt.h"
#include "corpus/corpus_build.h"
#include "tune/tune.h"

SDI_HIDDEN sd_status sdi_compile_cached(sd_context *ctx, const sd_csr *a, const sd_csr *b, sd_op op,
                                        int k, const sd_compile_options *opts, sd_kernel **out);

static void test_no_device_cause(void)
{
    char buf[320];
    sdi_no_device_cause(cudaErrorInsufficientDriver,
                        "libcuda.so.1: cannot open shared object file: No such file or directory",
                        0, 13000, buf, sizeof buf);
    SDT_CHECK(strcmp(buf, "no NVIDIA driver found (libcuda.so.1 not loadable: cannot open "
                          "shared object file: No such file or directory)") == 0,
              "no driver: '%s'", buf);
    /* A driver that loads but is older than the runtime: both versions. */
    sdi_no_device_cause(cudaErrorInsufficientDriver, NULL, 12040, 13000, buf, sizeof buf);
    SDT_CHECK(strstr(buf, "the NVIDIA driver supports CUDA 12.4, older than this build's "
                          "CUDA 13.0 runtime") != NULL,
              "old driver: '%s'", buf);
    SDT_CHECK(strstr(buf, "cudaErrorInsufficientDriver") != NULL, "old driver: '%s'", buf);
    sdi_no_device_cause(cudaErrorNoDevice, "libcuda.so.1: cannot open", 0, 13000, buf, sizeof buf);
    SDT_CHECK(strncmp(buf, "no NVIDIA driver found", 22) == 0, "no device, no driver: '%s'", buf);
    sdi_no_device_cause(cudaErrorNoDevice, NULL, 12080, 13000, buf, sizeof buf);
    SDT_CHECK(strstr(buf, "the NVIDIA driver (CUDA 12.8) reports no GPU") != NULL,
              "no device: '%s'", buf);
    /* Other causes keep CUDA's own words. */
    sdi_no_device_cause(cudaErrorDevicesUnavailable, NULL, 12080, 13000, buf, sizeof buf);
    SDT_CHECK(strstr(buf, "cudaErrorDevicesUnavailable") != NULL, "busy device: '%s'", buf);
}

/* `sparseditto run` asks for a cached kernel only; with use_cache = 0 that is a bad
 * argument, refused before the kernel, its event and its copy of A exist (it returned
 * after making them once, and they leaked). The check comes before the context is
 * touched, so a zeroed context (no device needed) reaches it. */
static void test_cached_without_cache(void)
{
    sd_context fake;
    memset(&fake, 0, sizeof fake);
    int64_t rp[3] = {0, 1, 2};
    int32_t col[2] = {0, 1};
    float val[2] = {1, 2};
    sd_csr a = {2, 2, 2, rp, col, val};
    sd_compile_options o = sd_compile_options_default();
    o.use_cache = 0;
    sd_kernel *kern = (sd_kernel *)&fake; /* must come back NULL */
    const long long live = sdi_alloc_live_bytes();
    SDT_STATUS(sdi_compile_cached(&fake, &a, NULL, SD_OP_SPMV, 1, &o, &kern), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "use_cache = 0") != NULL, "'%s'", sd_last_error());
    SDT_CHECK(kern == NULL, "the kernel of a refused call");
    SDT_CHECK(sdi_alloc_live_bytes() == live, "%lld bytes left allocated",
              sdi_alloc_live_bytes() - live);
}

/* Every int32 field of a configuration at v (its widest text when v = INT_MIN). */
static void fill_words(void *cfg, size_t size, int32_t v)
{
    int32_t *w = cfg;
    for (size_t i = 0; i < size / sizeof *w; i++)
        w[i] = v;
}

/* text, described into a buffer far larger than any, fits one of cap bytes whole. */
static void check_fits(const char *what, const char *text, size_t cap)
{
    SDT_CHECK(strlen(text) + 1 <= cap, "%s: %zu characters do not fit %zu bytes: '%s'", what,
              strlen(text), cap, text);
    /* the trials' copies (sdi_trial.config) hold every configuration text */
    SDT_CHECK(cap <= sizeof(((sdi_trial *)0)->config), "%s: %zu-byte text, %zu-byte trial", what,
              cap, sizeof(((sdi_trial *)0)->config));
}

/* A plan of table entry `index` with every int32 parameter at v but its family's id (and
 * the given SpMM split mode / SpGEMM forced kind and NVRTC level). */
static sdi_plan widest_plan(int index, int32_t v, int mode, int kind, int fast)
{
    const sdi_family *f = sdi_family_at(index);
    sdi_plan p;
    memset(&p, 0, sizeof p);
    p.op = f->op;
    p.k = f->op == SD_OP_SPMM ? 32 : 1;
    p.family = index;
    if (f->op == SD_OP_SPMV) {
        fill_words(&p.p.spmv, sizeof p.p.spmv, v);
        p.p.spmv.family = f->id;
    } else if (f->op == SD_OP_SPMM) {
        fill_words(&p.p.spmm, sizeof p.p.spmm, v);
        p.p.spmm.tmpl = f->id;
        p.p.spmm.split_mode = mode;
    } else {
        fill_words(&p.p.spgemm, sizeof p.p.spgemm, v);
        p.p.spgemm.family = f->id;
        p.p.spgemm.force_kind = kind;
        p.p.spgemm.fast_compile = fast;
    }
    return p;
}

/* Every family's widest plan text fits SDI_PLAN_TEXT (the trials' copies and the
 * candidates' descriptions), through the family table. */
static void test_config_text_fits(void)
{
    static const int32_t widest[] = {INT_MIN, INT_MAX, -1, 1};
    char big[4096], what[96];
    for (int w = 0; w < 4; w++)
        for (int i = 0; i < sdi_family_count(); i++) {
            const sdi_family *f = sdi_family_at(i);
            const bool sg = f->op == SD_OP_SPGEMM;
            const int modes = f->op == SD_OP_SPMM ? 5 : 1;
            const int kmin = sg ? -1 : 0, kmax = sg ? SDI_SG_NKINDS - 1 : 0;
            const int fmin = sg ? -1 : 0, fmax = sg ? 3 : 0;
            for (int mode = 0; mode < modes; mode++)
                for (int kind = kmin; kind <= kmax; kind++)
                    for (int fast = fmin; fast <= fmax; fast++) {
                        sdi_candidate c;
                        memset(&c, 0, sizeof c);
                        c.kind = SDI_CAND_PLAN;
                        c.op = f->op;
                        c.plan = widest_plan(i, widest[w], mode, kind, fast);
                        c.k = c.plan.k;
                        sdi_candidate_describe(&c, big, sizeof big);
                        snprintf(what, sizeof what, "family %d.%s mode %d kind %d", (int)f->op,
                                 f->name, mode, kind);
                        check_fits(what, big, SDI_PLAN_TEXT);
                    }
        }
    sdi_candidate v;
    memset(&v, 0, sizeof v);
    v.kind = SDI_CAND_VENDOR;
    memset(v.vendor_name, 'x', sizeof v.vendor_name - 1);
    sdi_candidate_describe(&v, big, sizeof big);
    check_fits("cuSPARSE variant", big, SDI_PLAN_TEXT);
    v.kind = SDI_CAND_AGENT;
    memset(v.agent_model, 'm', sizeof v.agent_model - 1);
    sdi_candidate_describe(&v, big, sizeof big);
    check_fits("agent kernel", big, SDI_PLAN_TEXT);
}

/* Features that reach every rule of rules-v1: skewed rows, a tiny matrix, dense tiles,
 * padding, rows beyond shared memory. */
static void check_reasons(const char *what, const sdi_ranking *r)
{
    SDT_CHECK(r->n > 0, "%s: nothing ranked", what);
    for (int i = 0; i < r->n; i++)
        for (int q = 0; q < r->e[i].nreasons; q++) {
            const sdi_rank_reason *rr = &r->e[i].reasons[q];
            /* a text that fills its buffer may have been cut */
            SDT_CHECK(strlen(rr->why) + 1 < sizeof rr->why, "%s: %s's reason cut: '%s'", what,
                      r->e[i].label, rr->why);
            SDT_CHECK(strlen(rr->feature) + 1 < sizeof rr->feature, "%s: %s's feature cut: '%s'",
                      what, r->e[i].label, rr->feature);
        }
}

static void test_rank_reasons_whole(void)
{
    sd_features f;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        f.values[i] = 2.0;
    f.values[sdi_feature_index("row_cv")] = 10.0;
    f.values[sdi_feature_index("nnz")] = 100.0;
    f.values[sdi_feature_index("u_max")] = 1e6;
    static const sd_op ops[] = {SD_OP_SPMV, SD_OP_SPMM, SD_OP_SPMM, SD_OP_SPGEMM};
    static const int ks[] = {1, 8, 256, 1};
    bool tc_seen = false;
    for (int o = 0; o < 4; o++) {
        f.op = ops[o];
        sdi_ranking r;
        char what[64];
        snprintf(what, sizeof what, "rules, op %d, K %d", (int)ops[o], ks[o]);
        SDT_OK(sdi_rank_rules(&f, ops[o], ks[o], &r));
        check_reasons(what, &r);
        for (int i = 0; i < r.n; i++)
            if (strcmp(r.e[i].label, "tc") == 0 && r.e[i].nreasons > 0 &&
                strstr(r.e[i].reasons[0].why, "tensor-core template (bsr_tc) is off") != NULL) {
                tc_seen = true;
                const char *why = r.e[i].reasons[0].why, *end = "(SPARSEDITTO_TC=1 searches it)";
                size_t n = strlen(why), ne = strlen(end);
                SDT_CHECK(n > ne && strcmp(why + n - ne, end) == 0, "tc reason cut: '%s'", why);
            }
        /* the ranker a search uses: the shipped model when one is found */
        snprintf(what, sizeof what, "sdi_rank, op %d, K %d", (int)ops[o], ks[o]);
        SDT_OK(sdi_rank(&f, ops[o], ks[o], &r));
        check_reasons(what, &r);
    }
    if (!sdi_config_get()->tc)
        SDT_CHECK(tc_seen, "the tensor-core template's reason was not ranked");
}

/* A file's base name is a corpus matrix's name (its identity in the journal): one that
 * does not fit is a parse error naming the line, as for specs and shared names (it was
 * cut, and two long names could become one). */
static void test_corpus_file_name_whole(void)
{
    char name[sizeof(((sdi_corpus_entry *)0)->name) + 8], list[400];
    memset(name, 'm', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    snprintf(list, sizeof list, "stencil2d:n=30\ndata/%s.mtx\n", name);
    sdi_corpus_entry *e = NULL;
    int n = 0;
    SDT_STATUS(sdi_corpus_list_parse(list, strlen(list), "/m", &e, &n), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "line 2") != NULL && strstr(sd_last_error(), "too long") != NULL,
              "message: %s", sd_last_error());
    SDT_CHECK(e == NULL && n == 0, "a refused list left %d entries", n);
    sdi_free(e);
    /* the longest name that fits is kept whole */
    name[sizeof(((sdi_corpus_entry *)0)->name) - 1] = '\0';
    snprintf(list, sizeof list, "data/%s.mtx.gz\n", name);
    SDT_OK(sdi_corpus_list_parse(list, strlen(list), "/m", &e, &n));
    SDT_CHECK(n == 1 && strcmp(e[0].name, name) == 0, "%d entries, name '%s'", n,
              n > 0 ? e[0].name : "");
    sdi_free(e);
}

/* An n x n arrow: a dense first row and column. A·A has about n^2 products and every
 * row of C is dense (each row of A reaches the dense first row). */
static void arrow(int32_t n, sd_csr *a)
{
    SDT_OK(sdi_csr_alloc(a, n, n, 2 * (int64_t)n - 1));
    int64_t at = 0;
    for (int32_t j = 0; j < n; j++)
        a->colind[at++] = j;
    a->rowptr[0] = 0;
    a->rowptr[1] = n;
    for (int32_t i = 1; i < n; i++) {
        a->colind[at++] = 0;
        a->rowptr[i + 1] = at;
    }
    for (int64_t p = 0; p < at; p++)
        a->vals[p] = 1.0f;
}

/* k dense columns (the first k) and k dense rows (the first k) in an n x n matrix. */
static void dense_lines(int32_t n, int32_t k, sd_csr *a)
{
    SDT_OK(sdi_csr_alloc(a, n, n, (int64_t)k * n + (int64_t)(n - k) * k));
    int64_t at = 0;
    a->rowptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < (i < k ? n : k); j++)
            a->colind[at++] = j;
        a->rowptr[i + 1] = at;
    }
    for (int64_t p = 0; p < at; p++)
        a->vals[p] = 1.0f;
}

static void test_spgemm_infeasible(void)
{
    sdi_gpu_props h200;
    SDT_OK(sdi_gpu_profile("H200", &h200));
    sd_csr a;
    memset(&a, 0, sizeof a);
    const int32_t n = 320000;
    arrow(n, &a);
    sdi_spgemm_output_bound ob;
    sdi_spgemm_output_bound_compute(&a, &a, &ob);
    const double nn = (double)n * n;
    SDT_CHECK(ob.products == nn + n - 1, "products %.0f", ob.products); /* n^2 - n, and 2n - 1 of row 0 */
    SDT_CHECK(ob.nnz_c_min == (int64_t)n * n && ob.nnz_c_max == (int64_t)n * n, "C between %lld and %lld",
              (long long)ob.nnz_c_min, (long long)ob.nnz_c_max);
    /* plan (and compile without a GPU) stop before any plan, naming the numbers */
    sdi_tune_result *r = calloc(1, sizeof *r);
    const double t0 = sdi_now();
    SDT_STATUS(sdi_tune_spgemm_offline(&a, NULL, -1, &h200, 0, 1, r, NULL), SD_ERR_OUT_OF_MEMORY);
    const char *msg = sd_last_error();
    SDT_CHECK(strstr(msg, "SpGEMM A·A does not fit the device") != NULL && strstr(msg, "1.02e+11 products") != NULL &&
                  strstr(msg, "at least 102400000000 entries") != NULL && strstr(msg, "819.2 GB") != NULL &&
                  strstr(msg, "150.1 GB of NVIDIA H200 (profile)") != NULL,
              "message: %s", msg);
    SDT_CHECK(r->ntrials == 0 && r->ms_compile == 0, "%d plans, NVRTC %.0f ms", r->ntrials, r->ms_compile);
    SDT_CHECK(sdi_now() - t0 < 30, "refused after %.1f s", sdi_now() - t0);
    /* sd_plan, the API's planner, too */
    char *json = NULL;
    SDT_STATUS(sd_plan(&a, SD_OP_SPGEMM, 1, "H200", 0, &json), SD_ERR_OUT_OF_MEMORY);
    SDT_CHECK(json == NULL && strstr(sd_last_error(), "does not fit the device") != NULL, "sd_plan: %s",
              sd_last_error());
    sd_csr_free(&a);
    /* A·Aᵀ of a single dense column: a dense C of m^2 entries */
    const int32_t m = 200000;
    SDT_OK(sdi_csr_alloc(&a, m, 1, m));
    for (int32_t i = 0; i <= m; i++)
        a.rowptr[i] = i;
    for (int32_t i = 0; i < m; i++) {
        a.colind[i] = 0;
        a.vals[i] = 1.0f;
    }
    SDT_STATUS(sdi_tune_spgemm_offline(&a, NULL, -1, &h200, 0, 0, r, NULL), SD_ERR_OUT_OF_MEMORY);
    SDT_CHECK(strstr(sd_last_error(), "SpGEMM A·Aᵀ does not fit") != NULL, "message: %s", sd_last_error());
    sd_csr_free(&a);
    free(r);
}

/* Many products but a C that fits: planned as before. Ten dense rows and columns of a
 * 100000 x 100000 matrix make 2e11 products, but C has 1e10 entries (80 GB), which an
 * H200's 150 GB holds. */
static void test_spgemm_feasible(void)
{
    sdi_gpu_props h200;
    SDT_OK(sdi_gpu_profile("H200", &h200));
    sd_csr a;
    memset(&a, 0, sizeof a);
    dense_lines(100000, 10, &a);
    sdi_spgemm_output_bound ob;
    sdi_spgemm_output_bound_compute(&a, &a, &ob);
    SDT_CHECK(ob.products > 1e11 && ob.nnz_c_min == (int64_t)100000 * 100000, "%.3g products, C >= %lld",
              ob.products, (long long)ob.nnz_c_min);
    SDT_OK(sdi_spgemm_output_check(&a, &a, "A·A", &h200));
    /* C's bytes as the executor counts them, saturated where a bound of 2^62 entries
     * would overflow */
    SDT_CHECK(sdi_spgemm_output_bytes(3, 10) == 4 * 8 + 10 * 8, "bytes of a small C");
    SDT_CHECK(sdi_spgemm_output_bytes(INT32_MAX, (int64_t)INT32_MAX * INT32_MAX) == INT64_MAX,
              "bytes of the largest C");
    /* a smaller device refuses it */
    sdi_gpu_props small = h200;
    small.global_mem_bytes = 64ll << 30;
    SDT_STATUS(sdi_spgemm_output_check(&a, &a, "A·A", &small), SD_ERR_OUT_OF_MEMORY);
    sdi_tune_result *r = calloc(1, sizeof *r);
    SDT_OK(sdi_tune_spgemm_offline(&a, NULL, -1, &h200, 0, 0, r, NULL));
    SDT_CHECK(r->ntrials > 0, "no plan for a product whose C fits");
    free(r);
    sd_csr_free(&a);
    /* The bounds hold nnz(C) between them on generated matrices (exact from the
     * reference). */
    static const char *const specs[] = {"powerlaw:rows=3000,deg=6", "rmat:scale=11,ef=8",
                                        "banded:n=2000,bw=5,fill=0.5", "bimodal:rows=2000"};
    for (int i = 0; i < 4; i++) {
        SDT_OK(sdi_gen(specs[i], sdt_seed, &a));
        sdi_reference ref;
        memset(&ref, 0, sizeof ref);
        SDT_OK(sdi_reference_spgemm(&a, &a, &ref));
        sdi_spgemm_output_bound_compute(&a, &a, &ob);
        SDT_CHECK(ob.nnz_c_min <= ref.c.nnz && ref.c.nnz <= ob.nnz_c_max && ob.nnz_c_max <= ob.products,
                  "%s: %lld <= nnz(C) %lld <= %lld <= %.0f", specs[i], (long long)ob.nnz_c_min,
                  (long long)ref.c.nnz, (long long)ob.nnz_c_max, ob.products);
        sdi_reference_free(&ref);
        sd_csr_free(&a);
    }
}

int main(void)
{
    sdt_init("test_messages");
    SDT_RUN(test_no_device_cause);
    SDT_RUN(test_cached_without_cache);
    SDT_RUN(test_config_text_fits);
    SDT_RUN(test_rank_reasons_whole);
    SDT_RUN(test_corpus_file_name_whole);
    SDT_RUN(test_spgemm_infeasible);
    SDT_RUN(test_spgemm_feasible);
    return sdt_finish();
}
