/* tests/cpu/test_inspect.c: the inspection entry points of the public API that the Python
 * binding uses (src/api/inspect.c): sd_csr_transpose, sd_csr_hash, sd_rank, sd_plan and
 * sd_json_free — results, argument errors, and every host allocation failing in turn
 * without a leak (the asan lane checks the rest). */
#include <stdlib.h>

#include "core/core.h"
#include "core/json_parse.h"
#include "gen/gen.h"
#include "sdt.h"

/* 3×4: [1 0 2 0; 0 0 0 0; 3 4 0 5] */
static sd_csr small(void)
{
    static int64_t rp[] = {0, 2, 2, 5};
    static int32_t ci[] = {0, 2, 0, 1, 3};
    static float v[] = {1, 2, 3, 4, 5};
    sd_csr a = {3, 4, 5, rp, ci, v};
    return a;
}

static void test_transpose(void)
{
    sd_csr a = small(), t, tt;
    SDT_OK(sd_csr_transpose(&a, &t));
    SDT_CHECK(t.rows == 4 && t.cols == 3 && t.nnz == 5, "4x3 with 5 entries");
    const int64_t want_rp[] = {0, 2, 3, 4, 5};
    const int32_t want_ci[] = {0, 2, 2, 0, 2};
    const float want_v[] = {1, 3, 4, 2, 5};
    int same = 1;
    for (int i = 0; i <= 4; i++)
        same &= t.rowptr[i] == want_rp[i];
    for (int e = 0; e < 5; e++)
        same &= t.colind[e] == want_ci[e] && t.vals[e] == want_v[e];
    SDT_CHECK(same, "entries of Aᵀ");
    SDT_OK(sd_csr_check(&t));
    SDT_OK(sd_csr_transpose(&t, &tt));
    same = tt.rows == a.rows && tt.cols == a.cols && tt.nnz == a.nnz;
    for (int i = 0; same && i <= a.rows; i++)
        same &= tt.rowptr[i] == a.rowptr[i];
    for (int e = 0; same && e < a.nnz; e++)
        same &= tt.colind[e] == a.colind[e] && tt.vals[e] == a.vals[e];
    SDT_CHECK(same, "(Aᵀ)ᵀ = A");
    sd_csr_free(&t);
    sd_csr_free(&tt);

    SDT_STATUS(sd_csr_transpose(NULL, &t), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_csr_transpose(&a, NULL), SD_ERR_INVALID_ARG);
    int32_t bad_ci[] = {0, 9, 0, 1, 3};
    sd_csr bad = a;
    bad.colind = bad_ci;
    SDT_STATUS(sd_csr_transpose(&bad, &t), SD_ERR_INVALID_ARG);
    SDT_CHECK(t.rowptr == NULL && strstr(sd_last_error(), "sd_csr_transpose") != NULL,
              "zeroed output, named cause: %s", sd_last_error());

    /* Every allocation failing in turn. */
    long long live0 = sdi_alloc_live_bytes();
    int failures = 0;
    for (long n = 0; n < 32; n++) {
        sdi_alloc_fail_after(n);
        sd_status s = sd_csr_transpose(&a, &t);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sd_csr_free(&t);
            break;
        }
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && t.rowptr == NULL, "failure %ld reported", n);
    }
    SDT_CHECK(failures >= 1 && sdi_alloc_live_bytes() == live0, "no leak (%d failures)", failures);
}

static void test_hash(void)
{
    sd_csr a = small();
    char h1[33], h2[33], h3[33], h4[33];
    SDT_OK(sd_csr_hash(&a, 0, h1));
    SDT_OK(sd_csr_hash(&a, 1, h2));
    SDT_CHECK(strlen(h1) == 32 && strlen(h2) == 32 && strcmp(h1, h2) != 0,
              "pattern %s, with values %s", h1, h2);
    float v2[] = {1, 2, 3, 4, 6};
    sd_csr b = a;
    b.vals = v2;
    SDT_OK(sd_csr_hash(&b, 0, h3));
    SDT_OK(sd_csr_hash(&b, 1, h4));
    SDT_CHECK(strcmp(h1, h3) == 0 && strcmp(h2, h4) != 0,
              "same pattern hash, different value hash");
    int32_t ci[] = {0, 3, 0, 1, 3};
    b.colind = ci;
    SDT_OK(sd_csr_hash(&b, 0, h3));
    SDT_CHECK(strcmp(h1, h3) != 0, "another pattern, another hash");
    SDT_STATUS(sd_csr_hash(NULL, 0, h3), SD_ERR_INVALID_ARG);
    SDT_CHECK(h3[0] == '\0', "cleared on failure");
    SDT_STATUS(sd_csr_hash(&a, 0, NULL), SD_ERR_INVALID_ARG);
}

static void test_rank(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("powerlaw:rows=3000,deg=8,alpha=2,max=500", 3, &a));
    char *json = NULL;
    SDT_OK(sd_rank(&a, SD_OP_SPMM, 32, NULL, &json));
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(json, -1, &v));
    const sdi_jvalue *r = sdi_jget(&v, "ranking");
    const sdi_jvalue *t = r ? sdi_jget(r, "templates") : NULL;
    SDT_CHECK(strcmp(sdi_jget_string(&v, "op", ""), "spmm") == 0 &&
                  sdi_jget_number(&v, "k", 0) == 32 && t != NULL && t->n >= 3,
              "spmm K=32 ranking with %d templates", t ? t->n : -1);
    SDT_CHECK(sdi_jget(&v, "model_path") != NULL, "model_path present (null: rules)");
    sdi_jvalue_free(&v);
    sd_json_free(json);
    sd_json_free(NULL);

    SDT_STATUS(sd_rank(&a, SD_OP_SPMM, 0, NULL, &json), SD_ERR_INVALID_ARG);
    SDT_CHECK(json == NULL, "no text after a failure");
    SDT_STATUS(sd_rank(&a, SD_OP_SPMM, 70000, NULL, &json), SD_ERR_UNSUPPORTED);
    SDT_STATUS(sd_rank(&a, (sd_op)9, 1, NULL, &json), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_rank(NULL, SD_OP_SPMV, 1, NULL, &json), SD_ERR_INVALID_ARG);
    SDT_STATUS(sd_rank(&a, SD_OP_SPMV, 1, NULL, NULL), SD_ERR_INVALID_ARG);
    SDT_CHECK(sd_rank(&a, SD_OP_SPMV, 1, "/nonexistent/energy.json", &json) != SD_OK &&
                  json == NULL && strstr(sd_last_error(), "sd_rank") != NULL,
              "missing weights named: %s", sd_last_error());

    long long live0 = sdi_alloc_live_bytes();
    int failures = 0;
    for (long n = 0; n < 400; n++) {
        sdi_alloc_fail_after(n);
        sd_status s = sd_rank(&a, SD_OP_SPMV, 1, NULL, &json);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sd_json_free(json);
            break;
        }
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && json == NULL, "failure %ld: %s", n,
                  sd_status_string(s));
    }
    SDT_CHECK(failures >= 2 && sdi_alloc_live_bytes() == live0, "rank: no leak (%d failures)",
              failures);
    sd_csr_free(&a);
}

static void test_plan(void)
{
    sd_csr a;
    SDT_OK(sdi_gen("stencil2d:n=60", 3, &a));
    char *json = NULL;
    SDT_OK(sd_plan(&a, SD_OP_SPMV, 1, "H200", 2, &json));
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(json, -1, &v));
    const sdi_jvalue *plans = sdi_jget(&v, "plans");
    const sdi_jvalue *gpu = sdi_jget(&v, "gpu");
    SDT_CHECK(plans != NULL && plans->n >= 1 && plans->n <= 2, "%d plans for 2 branches",
              plans ? plans->n : -1);
    SDT_CHECK(gpu && strstr(sdi_jget_string(gpu, "name", ""), "H200") != NULL,
              "the H200 profile");
    SDT_CHECK(sdi_jget(&v, "record") != NULL, "the record");
    sdi_jvalue_free(&v);
    sd_json_free(json);
    SDT_OK(sd_plan(&a, SD_OP_SPGEMM, 0, "H200", 2, &json));
    SDT_OK(sdi_json_parse(json, -1, &v));
    plans = sdi_jget(&v, "plans");
    SDT_CHECK(plans != NULL && plans->n >= 1, "SpGEMM: %d plans", plans ? plans->n : -1);
    sdi_jvalue_free(&v);
    sd_json_free(json);
    SDT_STATUS(sd_plan(&a, SD_OP_SPMV, 1, "H200", 17, &json), SD_ERR_INVALID_ARG);
    SDT_CHECK(sd_plan(&a, SD_OP_SPMV, 1, "no-such-gpu", 0, &json) != SD_OK && json == NULL,
              "unknown profile refused: %s", sd_last_error());

    long long live0 = sdi_alloc_live_bytes();
    int failures = 0;
    for (long n = 0; n < 2000; n++) {
        sdi_alloc_fail_after(n);
        sd_status s = sd_plan(&a, SD_OP_SPMM, 8, "H200", 1, &json);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sd_json_free(json);
            break;
        }
        failures++;
        SDT_CHECK(json == NULL, "no text after failure %ld", n);
        SDT_CHECK(sdi_alloc_live_bytes() == live0, "plan: no leak after failure %ld", n);
        if (sdi_alloc_live_bytes() != live0)
            break;
    }
    SDT_CHECK(failures >= 2, "plan: %d injected failures", failures);
    sd_csr_free(&a);
}

int main(void)
{
    sdt_init("test_inspect");
    SDT_RUN(test_transpose);
    SDT_RUN(test_hash);
    SDT_RUN(test_rank);
    SDT_RUN(test_plan);
    return sdt_finish();
}
