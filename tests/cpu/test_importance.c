/* tests/cpu/test_importance.c: the energy model's permutation importance
 * (tools/evalmodel/importance.c) on the synthetic corpus, whose fastest template is a known
 * function of row_cv, dense_tile_nnz_frac (SpMV, SpMM), u_max and fit_4k (SpGEMM): those
 * features must matter, the SpGEMM-only features must not matter at all for SpMV and SpMM
 * (their inputs are 0 there), the result is deterministic in its seed, the tables name
 * every feature, and every allocation failure is reported without a leak. */
#include <math.h>

#include "analysis/analysis.h"
#include "evalmodel/importance.h"
#include "sdt.h"

static sdi_energy_model g_model;
static sdi_corpus g_test;

/* Rank of feature f by regret increase for op (0 = most important). */
static int rank_of(const sdi_energy_importance *imp, int op, int f)
{
    int r = 0;
    for (int j = 0; j < SDI_EM_NFEAT; j++)
        r += imp->regret[op][j] > imp->regret[op][f];
    return r;
}

static void test_known_features(void)
{
    sdi_energy_importance a, b;
    SDT_OK(sdi_energy_importance_compute(&g_model, &g_test, 3, 7, &a));
    for (int op = 0; op < SDI_EM_NOP; op++)
        SDT_CHECK(a.ntasks[op] > 50 && a.base_regret[op] >= 1.0, "op %d: %d tasks, regret %g", op,
                  a.ntasks[op], a.base_regret[op]);
    /* The synthetic features are correlated (dense_tile_frac with dense_tile_nnz_frac,
     * the padding ratios with row_cv, u_p95 and fit_512 with u_max and fit_4k), so the
     * model may lean on a correlate: the checks ask for a deciding feature near the top. */
    for (int op = SD_OP_SPMV; op <= SD_OP_SPMM; op++) {
        int r_dense = rank_of(&a, op, SDI_F_DENSE_TILE_NNZ_FRAC);
        SDT_CHECK(r_dense < 3, "op %d: dense_tile_nnz_frac rank %d", op, r_dense);
        SDT_CHECK(a.regret[op][SDI_F_DENSE_TILE_NNZ_FRAC] > 1.02 * a.base_regret[op],
                  "op %d: shuffling dense_tile_nnz_frac raises the regret (%g vs %g)", op,
                  a.regret[op][SDI_F_DENSE_TILE_NNZ_FRAC], a.base_regret[op]);
        int zero = 1;
        for (int f = SDI_F_U_TOTAL; f <= SDI_F_GAMMA; f++)
            zero &= a.regret[op][f] == a.base_regret[op] && a.top1[op][f] == a.base_top1[op];
        SDT_CHECK(zero, "op %d: the SpGEMM-only features change nothing", op);
    }
    int best = 0;
    for (int f = 1; f < SDI_EM_NFEAT; f++)
        if (a.regret[SD_OP_SPGEMM][f] > a.regret[SD_OP_SPGEMM][best])
            best = f;
    SDT_CHECK(best == SDI_F_U_MAX || best == SDI_F_U_P95 || best == SDI_F_FIT_4K ||
                  best == SDI_F_FIT_512,
              "spgemm: the most important feature is %s", sdi_energy_input_name(best));
    SDT_OK(sdi_energy_importance_compute(&g_model, &g_test, 3, 7, &b));
    SDT_CHECK(memcmp(&a, &b, sizeof a) == 0, "deterministic in the seed");

    char *md = NULL;
    SDT_OK(sdi_energy_importance_markdown(&a, "## title", &md));
    SDT_CHECK(md != NULL && strstr(md, "| row_cv |") && strstr(md, "| gamma |") &&
                  strstr(md, "## title"),
              "markdown names the features");
    sdi_free(md);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_energy_importance_json(&a, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(strstr(j.buf, "\"regret_increase_pct\"") && strstr(j.buf, "\"spgemm\""), "json");
    sdi_json_free(&j);
    SDT_STATUS(sdi_energy_importance_compute(&g_model, &g_test, 0, 7, &b), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_energy_importance_compute(NULL, &g_test, 1, 7, &b), SD_ERR_INVALID_ARG);
}

static void test_allocation_failures(void)
{
    long long live0 = sdi_alloc_live_bytes();
    int failures = 0;
    sdi_energy_importance a;
    for (long n = 0; n < 16; n++) {
        sdi_alloc_fail_after(n);
        sd_status s = sdi_energy_importance_compute(&g_model, &g_test, 1, 7, &a);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK)
            break;
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "failure %ld: %s", n, sd_status_string(s));
    }
    SDT_CHECK(failures >= 4 && sdi_alloc_live_bytes() == live0, "%d failures, no leak", failures);
}

int main(void)
{
    sdt_init("test_importance");
    sdi_corpus train;
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 40;
    if (sdi_corpus_synthetic(3, 240, &train) != SD_OK || sdi_corpus_synthetic(4, 120, &g_test) != SD_OK ||
        sdi_energy_train(&train, &o, &g_model) != SD_OK) {
        printf("FAIL: setup: %s\n", sd_last_error());
        return 1;
    }
    sdi_corpus_free(&train);
    SDT_RUN(test_known_features);
    SDT_RUN(test_allocation_failures);
    sdi_energy_model_free(&g_model);
    sdi_corpus_free(&g_test);
    return sdt_finish();
}
