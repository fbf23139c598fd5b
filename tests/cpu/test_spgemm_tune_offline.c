/* tests/cpu/test_spgemm_tune_offline.c: the SpGEMM compiler without a GPU: analysis,
 * ranking, the families' first-round plans scheduled on the host u(i) / spans, lowering
 * and NVRTC for sm_90, stopped before measurement; A·A, A·Aᵀ, a general A·B, an empty
 * product, argument errors; the record naming an edit trial's source; and the cache key
 * of an A·B kernel covering B's pattern. */
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/gpu.h"
#include "cache/cache.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "sdt.h"
#include "tune/tune.h"

static sdi_gpu_props gpu;

/* Runs the offline pipeline and checks what every SpGEMM compile must show. */
static void offline(const char *what, const sd_csr *a, const sd_csr *b, double want_products,
                    int want_aat, int compile)
{
    sdi_tune_result *r = calloc(1, sizeof *r);
    SDT_CHECK(r != NULL, "calloc");
    if (r == NULL)
        return;
    sdi_json j;
    sdi_json_init(&j, 0);
    SDT_OK(sdi_tune_spgemm_offline(a, b, -1, &gpu, 3, compile, r, &j));
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(r->op == SD_OP_SPGEMM && r->aat == want_aat && r->general_b == (b != NULL),
              "%s: op %d aat %d general %d", what, r->op, r->aat, r->general_b);
    SDT_CHECK(r->products == want_products, "%s: %.0f products, want %.0f", what, r->products,
              want_products);
    SDT_CHECK(r->ranking.op == SD_OP_SPGEMM && r->ranking.n == 3, "%s: ranking of V_SpGEMM", what);
    SDT_CHECK(r->ntrials == 3, "%s: %d first-round plans", what, r->ntrials);
    int lowered = 0;
    for (int t = 0; t < r->ntrials; t++) {
        lowered += r->trials[t].status == SD_ERR_NO_DEVICE;
        SDT_CHECK(r->trials[t].status == SD_ERR_NO_DEVICE, "%s: %s: %s: %s", what,
                  r->trials[t].family, sd_status_string(r->trials[t].status), r->trials[t].detail);
        SDT_CHECK(strncmp(r->trials[t].family, "spgemm.", 7) == 0, "%s: family %s", what,
                  r->trials[t].family);
    }
    SDT_CHECK(lowered == r->ntrials, "%s: every plan lowered", what);
    if (compile && want_products > 0)
        SDT_CHECK(r->ms_compile > 0, "%s: NVRTC did not run", what);
    SDT_CHECK(j.buf != NULL && strstr(j.buf, "\"M_rep\"") != NULL && strstr(j.buf, "\"bins\"") != NULL,
              "%s: plans JSON with schedule and bounds: %.200s", what, j.buf ? j.buf : "");
    /* The search record describes the product like the measured one. */
    sdi_json rec;
    sdi_json_init(&rec, 0);
    sdi_tune_result_json(r, &rec);
    SDT_OK(sdi_json_finish(&rec));
    SDT_CHECK(rec.buf != NULL && strstr(rec.buf, "\"product\"") != NULL &&
                  strstr(rec.buf, "\"peak_bytes\"") != NULL,
              "%s: record %.300s", what, rec.buf ? rec.buf : "");
    /* The 36 features travel with the record (the benchmark's per-task features). */
    SDT_CHECK(rec.buf != NULL && strstr(rec.buf, "\"features\":{\"rows\":") != NULL &&
                  strstr(rec.buf, "\"shape_class\"") != NULL,
              "%s: features in the record", what);
    SDT_CHECK(rec.buf != NULL && strstr(rec.buf, "\"edit_of\"") == NULL &&
                  strstr(rec.buf, "\"edit\"") == NULL,
              "%s: no trial is an edit", what);
    sdi_json_free(&rec);
    sdi_json_free(&j);
    sdi_tune_result_free(r);
    free(r);
}

static double products(const sd_csr *a, const sd_csr *b)
{
    int64_t *u = malloc((size_t)(a->rows > 0 ? a->rows : 1) * sizeof *u);
    double t = u ? sdi_spgemm_row_work(a, b->rowptr, u) : -1;
    free(u);
    return t;
}

static void test_square_a_times_a(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=40", 3, &a));
    offline("stencil A*A", &a, NULL, products(&a, &a), 0, 1);
    sd_csr_free(&a);
    SDT_OK(sdi_gen("rmat:scale=10,ef=8", 4, &a));
    offline("rmat A*A", &a, NULL, products(&a, &a), 0, 0);
    sd_csr_free(&a);
}

static void test_rectangular_a_times_at(void)
{
    sd_csr a, at;
    SDT_OK(sdi_gen("uniform:rows=300,cols=200,deg=4", 5, &a));
    SDT_OK(sdi_csr_transpose(&a, &at));
    offline("uniform A*At", &a, NULL, products(&a, &at), 1, 1);
    sd_csr_free(&at);
    sd_csr_free(&a);
}

static void test_general_a_times_b(void)
{
    sd_csr a, b;
    SDT_OK(sdi_gen("uniform:rows=120,cols=90,deg=3", 6, &a));
    SDT_OK(sdi_gen("powerlaw:rows=90,cols=150,deg=5", 7, &b));
    offline("uniform*powerlaw A*B", &a, &b, products(&a, &b), 0, 0);
    /* Inner sizes differ: an argument error, nothing planned. */
    sdi_tune_result *r = calloc(1, sizeof *r);
    if (r != NULL)
        SDT_STATUS(sdi_tune_spgemm_offline(&b, &b, -1, &gpu, 3, 0, r, NULL), SD_ERR_INVALID_ARG);
    free(r);
    sd_csr_free(&b);
    sd_csr_free(&a);
}

static void test_empty_product(void)
{
    /* No entries at all: every plan still lowers (no launches with rows). */
    sd_csr a;
    SDT_OK(sdi_csr_alloc(&a, 16, 16, 0));
    memset(a.rowptr, 0, 17 * sizeof *a.rowptr);
    offline("empty 16x16", &a, NULL, 0, 0, 1);
    sd_csr_free(&a);
}

/* Every offline trial's configuration names NVRTC level `want` (NULL: names none). */
static void expect_level(const sd_csr *a, sdi_tune_result *r, const char *want, const char *why)
{
    SDT_OK(sdi_tune_spgemm_offline(a, NULL, -1, &gpu, 3, 0, r, NULL));
    SDT_CHECK(r->ntrials > 0, "%s: no trials", why);
    for (int t = 0; t < r->ntrials; t++) {
        const char *at = strstr(r->trials[t].config, " nvrtc=");
        if (want == NULL)
            SDT_CHECK(at == NULL, "%s: trial %d: %s", why, t, r->trials[t].config);
        else
            SDT_CHECK(at != NULL && strncmp(at + 7, want, strlen(want)) == 0, "%s: trial %d: %s", why, t,
                      r->trials[t].config);
    }
    sdi_tune_result_free(r);
    memset(r, 0, sizeof *r);
}

/* SPARSEDITTO_SEARCH_FAST reaches the offline plans as it reaches the search's first round
 * (their configurations say the level): min when unset (the default),
 * none when "0", when SPARSEDITTO_NVRTC_FAST alone sets a level for every compile or when
 * the product is large (unless a level is asked); a bad
 * value is an error naming the variable. */
static void test_search_fast(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=30", 3, &a));
    sdi_tune_result *r = calloc(1, sizeof *r);
    SDT_CHECK(r != NULL, "calloc");
    if (r != NULL) {
        unsetenv("SPARSEDITTO_SEARCH_FAST");
        unsetenv("SPARSEDITTO_NVRTC_FAST");
        sdi_config_reload();
        expect_level(&a, r, "min", "unset");
        setenv("SPARSEDITTO_SEARCH_FAST", "mid", 1);
        sdi_config_reload();
        expect_level(&a, r, "mid", "mid");
        setenv("SPARSEDITTO_SEARCH_FAST", "0", 1);
        sdi_config_reload();
        expect_level(&a, r, NULL, "0");
        unsetenv("SPARSEDITTO_SEARCH_FAST");
        setenv("SPARSEDITTO_NVRTC_FAST", "max", 1);
        sdi_config_reload();
        expect_level(&a, r, NULL, "NVRTC_FAST alone");
        unsetenv("SPARSEDITTO_NVRTC_FAST");
        sdi_config_reload();
        /* A product of more than 5e8 multiplications: full optimisation unless asked. */
        sd_csr big;
        SDT_OK(sdi_gen("uniform:rows=20000,deg=200", 5, &big));
        if (big.rowptr != NULL) {
            expect_level(&big, r, NULL, "8e8 products, unset");
            setenv("SPARSEDITTO_SEARCH_FAST", "min", 1);
            sdi_config_reload();
            expect_level(&big, r, "min", "8e8 products, min asked");
            unsetenv("SPARSEDITTO_SEARCH_FAST");
            sdi_config_reload();
        }
        sd_csr_free(&big);
        setenv("SPARSEDITTO_SEARCH_FAST", "fastest", 1);
        sdi_config_reload();
        SDT_STATUS(sdi_tune_spgemm_offline(&a, NULL, -1, &gpu, 3, 0, r, NULL), SD_ERR_INVALID_ARG);
        SDT_CHECK(strstr(sd_last_error(), "SPARSEDITTO_SEARCH_FAST") != NULL, "error: %s", sd_last_error());
        sdi_error_clear();
        unsetenv("SPARSEDITTO_SEARCH_FAST");
        sdi_config_reload();
        sdi_tune_result_free(r);
        free(r);
    }
    sd_csr_free(&a);
}

/* An edit trial (the search's winner's edits) carries "edit_of", its source's index, and
 * "edit" in the record; the others carry neither, as they did before the keys, including
 * trial 0, which a zeroed trial would name if the index were stored as is. */
static void test_record_names_edits(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=20", 3, &a));
    sdi_tune_result *r = calloc(1, sizeof *r);
    SDT_CHECK(r != NULL, "calloc");
    if (r != NULL && sdi_tune_spgemm_offline(&a, NULL, -1, &gpu, 3, 0, r, NULL) == SD_OK &&
        r->ntrials == 3) {
        r->trials[2].edit_src = 1 + 1; /* trial 2 edits trial 1 */
        snprintf(r->trials[2].edit, sizeof r->trials[2].edit, "gh=10");
        sdi_json rec;
        sdi_json_init(&rec, 0);
        sdi_tune_result_json(r, &rec);
        SDT_OK(sdi_json_finish(&rec));
        sdi_jvalue v = {0};
        SDT_OK(sdi_json_parse(rec.buf != NULL ? rec.buf : "{}", -1, &v));
        const sdi_jvalue *tr = sdi_jget(&v, "trials");
        SDT_CHECK(tr != NULL && tr->n == 3, "%d trials in the record", tr ? tr->n : -1);
        for (int i = 0; tr != NULL && i < tr->n; i++) {
            const sdi_jvalue *t = &tr->items[i];
            if (i == 2)
                SDT_CHECK(sdi_jget_number(t, "edit_of", -1) == 1 &&
                              strcmp(sdi_jget_string(t, "edit", ""), "gh=10") == 0,
                          "trial 2: edit_of %g, edit %s", sdi_jget_number(t, "edit_of", -1),
                          sdi_jget_string(t, "edit", "?"));
            else
                SDT_CHECK(sdi_jget(t, "edit_of") == NULL && sdi_jget(t, "edit") == NULL,
                          "trial %d is no edit", i);
        }
        sdi_jvalue_free(&v);
        sdi_json_free(&rec);
    } else {
        SDT_CHECK(0, "offline SpGEMM: %s (%d trials)", sd_last_error(), r ? r->ntrials : -1);
    }
    if (r != NULL)
        sdi_tune_result_free(r);
    free(r);
    sd_csr_free(&a);
}

/* The cache key of A·B covers B's pattern: same A and same B sizes, B's pattern differs
 * → another key; A·A's key has no general-B flag. */
static void test_cache_key_covers_b(void)
{
    sd_csr a, b1, b2;
    SDT_OK(sdi_gen("uniform:rows=50,cols=40,deg=3", 8, &a));
    SDT_OK(sdi_gen("uniform:rows=40,cols=60,deg=4", 9, &b1));
    SDT_OK(sdi_csr_copy(&b1, &b2));
    /* Move the last entry of some row one column right: same sizes and nnz. */
    int moved = 0;
    for (int32_t r = 0; r < b2.rows && !moved; r++) {
        int64_t e = b2.rowptr[r + 1] - 1;
        if (e >= b2.rowptr[r] && b2.colind[e] + 1 < b2.cols) {
            b2.colind[e]++;
            moved = 1;
        }
    }
    SDT_CHECK(moved, "no entry could move");
    SDT_OK(sd_csr_check(&b2));
    sdi_cache_key k0, k1, k2, k1v;
    sdi_cache_key_init(&k0);
    sdi_cache_key_init(&k1);
    sdi_cache_key_init(&k2);
    sdi_cache_key_init(&k1v);
    sdi_cache_key_pattern(&k0, &a, NULL);
    sdi_cache_key_pattern(&k1, &a, &b1);
    sdi_cache_key_pattern(&k2, &a, &b2);
    for (int64_t q = 0; q < b1.nnz; q++)
        b1.vals[q] *= 3; /* values are not part of the key */
    sdi_cache_key_pattern(&k1v, &a, &b1);
    SDT_CHECK(!(k0.flags & SDI_CACHE_FLAG_GENERAL_B) && (k1.flags & SDI_CACHE_FLAG_GENERAL_B),
              "flags %d %d", k0.flags, k1.flags);
    SDT_CHECK(memcmp(&k1, &k2, sizeof k1) != 0, "B's pattern must change the key");
    SDT_CHECK(memcmp(&k1, &k1v, sizeof k1) == 0, "B's values must not change the key");
    SDT_CHECK(memcmp(&k0, &k1, sizeof k0) != 0, "A*B and A*A keys differ");
    sd_csr_free(&b2);
    sd_csr_free(&b1);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_spgemm_tune_offline");
    /* These checks time NVRTC itself: the on-disk JIT cache (on by default) would serve
     * the kernels a previous run compiled. */
    setenv("SPARSEDITTO_JIT_CACHE", "0", 1);
    sdi_config_reload();
    if (sdi_gpu_profile("H200", &gpu) != SD_OK) {
        printf("no H200 profile\n");
        return 1;
    }
    SDT_RUN(test_square_a_times_a);
    SDT_RUN(test_rectangular_a_times_at);
    SDT_RUN(test_general_a_times_b);
    SDT_RUN(test_empty_product);
    SDT_RUN(test_search_fast);
    SDT_RUN(test_record_names_edits);
    SDT_RUN(test_cache_key_covers_b);
    return sdt_finish();
}
