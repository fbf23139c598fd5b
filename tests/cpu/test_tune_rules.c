/* tests/cpu/test_tune_rules.c: the search's decision rules that need no GPU (tune.h):
 * when cuSPARSE's best variant runs instead of our winner (faster per execution or
 * pipelined), when that fallback runs replayed as a graph, the screening factor, the
 * brief protocol's threshold, and the order of the first round's families (through the
 * family table: the ranking's labels, interleaved for SpMV / SpMM; SpGEMM's leading
 * family, then label after label, then the rest). */
#include <stdlib.h>

#include "analysis/plan_stats.h"
#include "gen/gen.h"
#include "tune/tune.h"
#include "sdt.h"

static sdi_timing timing(double mean_us, double pipelined_us)
{
    sdi_timing t;
    memset(&t, 0, sizeof t);
    t.mean_us = t.median_us = t.min_us = mean_us;
    t.pipelined_us = pipelined_us;
    return t;
}

static void test_vendor_wins(void)
{
    sdi_timing ours, vend;
    ours = timing(10, 8), vend = timing(12, 9);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "ours faster in both: ours runs");
    ours = timing(10, 8), vend = timing(9, 9);
    SDT_CHECK(sdi_tune_vendor_wins(&ours, &vend), "cuSPARSE faster per execution: it runs");
    /* cage8 SpMM K = 8 on the H200: ours 6.79 / 5.30 us, cuSPARSE 7.99 / 5.12 us */
    ours = timing(6.79, 5.30), vend = timing(7.99, 5.12);
    SDT_CHECK(sdi_tune_vendor_wins(&ours, &vend), "cuSPARSE faster pipelined only: it runs");
    ours = timing(10, 8), vend = timing(10, 8);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "a tie keeps ours");
    /* brief-timed executions carry pipelined = mean; an unmeasured 0 decides nothing */
    ours = timing(10, 0), vend = timing(12, 5);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "our pipelined time unknown: per execution decides");
    ours = timing(10, 8), vend = timing(0, 0);
    SDT_CHECK(!sdi_tune_vendor_wins(&ours, &vend), "cuSPARSE unmeasured: ours runs");
}

/* The fallback's graph replay only where it is no slower than cuSPARSE's own calls in
 * either time; then it, and any plan of ours beating it, is below 1.0x in neither. */
static void test_vendor_replays(void)
{
    sdi_timing graph, plain, ours;
    graph = timing(6, 4.5), plain = timing(8.6, 4.8);
    SDT_CHECK(sdi_tune_vendor_replays(&graph, &plain), "replay faster in both: replayed");
    /* GD06_Java SpMM K = 8 on the H200: replay 6.06 / 5.12 us, calls 8.60 / 4.81 us */
    graph = timing(6.06, 5.12), plain = timing(8.60, 4.81);
    SDT_CHECK(!sdi_tune_vendor_replays(&graph, &plain), "replay slower pipelined: plain calls");
    graph = timing(9, 4), plain = timing(8.6, 4.8);
    SDT_CHECK(!sdi_tune_vendor_replays(&graph, &plain), "replay slower per execution: plain calls");
    graph = timing(0, 0), plain = timing(8.6, 4.8);
    SDT_CHECK(!sdi_tune_vendor_replays(&graph, &plain), "replay not measured: plain calls");
    graph = timing(8.6, 4.8), plain = timing(8.6, 4.8);
    SDT_CHECK(sdi_tune_vendor_replays(&graph, &plain), "a tie replays");
    /* The decision chain keeps every winner at or under the plain calls in both times:
     * our plan 6.49 / 4.91 us beats the replay per execution but not the calls pipelined. */
    graph = timing(6.06, 5.12), plain = timing(8.60, 4.81), ours = timing(6.49, 4.91);
    const sdi_timing *vt = sdi_tune_vendor_replays(&graph, &plain) ? &graph : &plain;
    const sdi_timing *win = sdi_tune_vendor_wins(&ours, vt) ? vt : &ours;
    SDT_CHECK(win == &plain, "GD06_Java's chain ends at cuSPARSE's own calls");
    SDT_CHECK(!sdi_tune_vendor_wins(win, &plain), "the winner is no slower than the baseline");
}

/* SpGEMM's final rounds take the winner and the closest valid candidates timed in full. */
static void test_finalists(void)
{
    sdi_trial tr[7];
    memset(tr, 0, sizeof tr);
    const double us[7] = {60, 70, 75, 90, 65, 62, 50};
    for (int i = 0; i < 7; i++)
        tr[i].t = timing(us[i], us[i]);
    tr[4].measured = SDI_MEASURED_BRIEF;    /* 65 us, but brief */
    tr[5].status = SD_ERR_VALIDATION;       /* 62 us, but invalid */
    tr[6].measured = SDI_MEASURED_SCREENED; /* 50 us? a screened single execution */
    int fin[3];
    int n = sdi_tune_finalists(tr, 7, 0, 1.3, 3, fin);
    SDT_CHECK(n == 3 && fin[0] == 0 && fin[1] == 1 && fin[2] == 2,
              "winner 0, then 70 and 75 us within 78 us: %d [%d %d %d]", n, fin[0], fin[1], fin[2]);
    n = sdi_tune_finalists(tr, 7, 0, 1.2, 3, fin);
    SDT_CHECK(n == 2 && fin[1] == 1, "within 72 us: only 70 us (%d)", n);
    n = sdi_tune_finalists(tr, 7, 3, 1.3, 2, fin);
    SDT_CHECK(n == 2 && fin[0] == 3 && fin[1] == 0, "cap 2 from trial 3: the fastest other (%d)", n);
    n = sdi_tune_finalists(tr, 7, 0, 1.0, 3, fin);
    SDT_CHECK(n == 1, "nothing within 1.0x: the winner alone (%d)", n);
    SDT_CHECK(sdi_tune_finalists(tr, 7, -1, 1.3, 3, fin) == 0, "no winner: none");
}

static void test_screen_and_brief(void)
{
    SDT_CHECK(sdi_tune_screen_factor(10) == SDI_TUNE_SCREEN, "short executions screened at 8x");
    SDT_CHECK(sdi_tune_screen_factor(SDI_TUNE_SCREEN_LONG_US) == SDI_TUNE_SCREEN_LONG,
              "executions of a millisecond or more screened at 1.5x");
    sdi_tune_options o;
    memset(&o, 0, sizeof o);
    SDT_CHECK(sdi_tune_brief_us(&o) == SDI_TUNE_BRIEF_US, "0 = the default threshold");
    o.brief_us = 3;
    SDT_CHECK(sdi_tune_brief_us(&o) == 3, "a given threshold is taken");
    o.brief_us = -1;
    SDT_CHECK(sdi_tune_brief_us(&o) == 0, "negative = no brief protocol");
}

/* The offline planner's first round, every family a branch: its trials in the search's
 * order. */
static sdi_tune_result *first_round(const char *gen, sd_op op, int k)
{
    sdi_gpu_props gpu;
    SDT_OK(sdi_gpu_profile("H200", &gpu));
    sd_csr a;
    SDT_OK(sdi_gen(gen, 5, &a));
    sdi_tune_result *r = calloc(1, sizeof *r);
    SDT_CHECK(r != NULL, "calloc");
    if (r != NULL)
        SDT_OK(sdi_tune_offline(&a, op, k, &gpu, 32, 0, r, NULL));
    sd_csr_free(&a);
    return r;
}

/* Whether the family of a trial ("spmv.merge") serves a label of the ranking (its rank
 * hook, with the statistics the search computes). */
static bool serves_ranked(sd_op op, const char *gen, const char *family_label, const sdi_tune_result *r)
{
    const char *name = strchr(family_label, '.');
    const sdi_family *f = sdi_family_at(name != NULL ? sdi_family_find(op, name + 1) : -1);
    if (f == NULL || f->rank == NULL)
        return false;
    sdi_gpu_props gpu;
    sd_csr a;
    if (sdi_gpu_profile("H200", &gpu) != SD_OK || sdi_gen(gen, 5, &a) != SD_OK)
        return false;
    sdi_spmv_stats vs;
    sdi_spmm_stats ms;
    memset(&vs, 0, sizeof vs);
    sdi_spmm_stats_compute(&a, &ms);
    bool ok = sdi_spmv_stats_compute(&a, &vs) == SD_OK, any = false;
    const sdi_task t = {.op = op, .k = r->k, .a = &a, .gpu = &gpu, .features = &r->features,
                        .spmv = &vs, .spmm = &ms};
    for (int l = 0; ok && l < r->ranking.n; l++)
        any |= f->rank(&t, r->ranking.e[l].label) >= 0;
    sd_csr_free(&a);
    return any;
}

static void test_ranked_order(void)
{
    const char *gens[] = {"stencil2d:n=60", "rmat:scale=11,ef=8", "powerlaw:rows=4000,deg=6"};
    for (int g = 0; g < 3; g++) {
        sdi_tune_result *r = first_round(gens[g], SD_OP_SPGEMM, 1);
        if (r == NULL)
            continue;
        /* every SpGEMM family once */
        int nsg = 0;
        for (int i = 0; i < sdi_family_count(); i++)
            nsg += sdi_family_at(i)->op == SD_OP_SPGEMM;
        SDT_CHECK(r->ntrials == nsg, "%s: %d trials, %d families", gens[g], r->ntrials, nsg);
        for (int i = 0; i < r->ntrials; i++)
            for (int j = 0; j < i; j++)
                SDT_CHECK(strcmp(r->trials[i].family, r->trials[j].family) != 0, "%s: %s twice",
                          gens[g], r->trials[i].family);
        /* after a leading family, the ranked labels in order */
        int t = 0;
        char want[64];
        snprintf(want, sizeof want, "spgemm.%s", r->ranking.n > 0 ? r->ranking.e[0].label : "");
        if (r->ntrials > 0 && strcmp(r->trials[0].family, want) != 0) {
            const sdi_family *lead =
                sdi_family_at(sdi_family_find(SD_OP_SPGEMM, strchr(r->trials[0].family, '.') + 1));
            SDT_CHECK(lead != NULL && lead->leads != NULL, "%s: %s leads without a leads hook",
                      gens[g], r->trials[0].family);
            t = 1;
        }
        for (int l = 0; l < r->ranking.n && t < r->ntrials; l++) {
            snprintf(want, sizeof want, "spgemm.%s", r->ranking.e[l].label);
            if (strcmp(r->trials[t].family, want) == 0)
                t++;
        }
        sdi_tune_result_free(r);
        free(r);
    }
    /* SpMV / SpMM: branches of the ranked labels only, no family twice */
    const sd_op ops[2] = {SD_OP_SPMV, SD_OP_SPMM};
    for (int o = 0; o < 2; o++)
        for (int g = 0; g < 3; g++) {
            sdi_tune_result *r = first_round(gens[g], ops[o], 32);
            if (r == NULL)
                continue;
            SDT_CHECK(r->ntrials > 0, "%s op %d: no branch", gens[g], (int)ops[o]);
            for (int i = 0; i < r->ntrials; i++)
                for (int j = 0; j < i; j++)
                    SDT_CHECK(strcmp(r->trials[i].family, r->trials[j].family) != 0, "%s: %s twice",
                              gens[g], r->trials[i].family);
            for (int i = 0; i < r->ntrials; i++)
                SDT_CHECK(serves_ranked(ops[o], gens[g], r->trials[i].family, r),
                          "%s op %d: branch %s serves a ranked label", gens[g], (int)ops[o],
                          r->trials[i].family);
            sdi_tune_result_free(r);
            free(r);
        }
}

int main(void)
{
    sdt_init("test_tune_rules");
    SDT_RUN(test_ranked_order);
    SDT_RUN(test_vendor_wins);
    SDT_RUN(test_vendor_replays);
    SDT_RUN(test_finalists);
    SDT_RUN(test_screen_and_brief);
    return sdt_finish();
}
