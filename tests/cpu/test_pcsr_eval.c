/* tests/cpu/test_pcsr_eval.c: the held-out evaluation of ParamSpMM's decider
 * (tools/evalmodel/pcsr_eval.h) on synthetic corpora: a best configuration that is a known
 * function of one feature is recovered on held-out matrices and beats the fixed default;
 * the split never separates a matrix's tasks (directly, and by a leak detector whose
 * labels only a leak could predict); unmeasured choices follow the documented rule; a
 * corpus without PCSR data is a clear error; allocation failures leak nothing. */
#include <unistd.h>

#include "analysis/analysis.h"
#include "evalmodel/pcsr_eval.h"
#include "sdt.h"

static unsigned long long rs;

static double urand(double a, double b)
{
    rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
    return a + (b - a) * (double)(rs >> 11) * 0x1.0p-53;
}

static const char *const shapes[5] = {"uniform", "moderate", "skewed", "power-law", "bimodal"};
static const int ks[2] = {8, 128};

enum { KNOWN_RULE, RANDOM_LABELS, NO_PCSR };

/* The known rule: W from the mean degree of non-empty rows, F 2, V 1, S 0. */
static int rule_best(double dh)
{
    sdi_paramspmm_params p = {dh < 8 ? 1 : dh < 64 ? 2 : 8, 2, 1, 0};
    return sdi_paramspmm_config_index(&p);
}

/* A corpus of nmat matrices with one spmm line per K of ks (each a valid energy-corpus
 * line with a "pcsr" member unless NO_PCSR). KNOWN_RULE: every configuration measured
 * (best 1.0, the others 1.3 and up), except that every 16th matrix lacks its rule's best;
 * RANDOM_LABELS: random features and a random best per matrix (the same for its K). */
static void write_corpus(const char *path, int nmat, int mode)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return;
    for (int m = 0; m < nmat; m++) {
        double x[SDI_PSPMM_NFEAT];
        double dh = exp(urand(log(1), log(512)));
        for (int i = 0; i < SDI_PSPMM_NFEAT; i++)
            x[i] = urand(0, 1);
        x[0] = x[1] = 1000;
        x[2] = 1000 * dh;
        x[3] = dh / 1000;
        x[4] = x[5] = dh;
        x[6] = 2 * dh;
        x[7] = x[8] = 0.5; /* the default keeps S = 0 */
        int best = mode == RANDOM_LABELS ? ((int)urand(0, 4) * 3 + 1) * 4 + (int)urand(0, 2)
                                         : rule_best(dh);
        for (int kk = 0; kk < 2; kk++) {
            fprintf(f, "{\"matrix\":\"m%d\",\"op\":\"spmm\",\"k\":%d,\"shape_class\":\"%s\","
                    "\"features\":{", m, ks[kk], shapes[m % 5]);
            for (int i = 0; i < SD_NUM_FEATURES; i++)
                fprintf(f, "%s\"%s\":%g", i ? "," : "", sdi_feature_get(i)->name, x[i % 18]);
            fprintf(f, "},\"tasks\":[{\"op\":\"spmm\",\"k\":%d,\"baseline_us\":1,"
                    "\"templates\":{\"csr\":1}}]", ks[kk]);
            if (mode != NO_PCSR) {
                fprintf(f, ",\"pcsr\":{\"features\":[");
                for (int i = 0; i < SDI_PSPMM_NFEAT; i++)
                    fprintf(f, "%s%.17g", i ? "," : "", x[i]);
                fprintf(f, "],\"configs\":[");
                int first = 1;
                for (int q = 0; q < SDI_PSPMM_NCONF; q++) {
                    if (mode == KNOWN_RULE && m % 16 == 15 && q == best)
                        continue;
                    sdi_paramspmm_params p;
                    sdi_paramspmm_config_of(q, &p);
                    fprintf(f, "%s{\"w\":%d,\"f\":%d,\"v\":%d,\"s\":%d,\"group\":32,\"us\":%g}",
                            first ? "" : ",", p.w, p.f, p.v, p.s, q == best ? 1.0 : 1.3 + 0.01 * q);
                    first = 0;
                }
                fprintf(f, "]}");
            }
            fprintf(f, "}\n");
        }
    }
    fclose(f);
}

static char path[96];

static sdi_pcsr_eval_opts small_opts(void)
{
    sdi_pcsr_eval_opts o = sdi_pcsr_eval_opts_default();
    o.folds = 4;
    o.seeds = 2;
    o.holdout = 12;
    o.forest.ntrees = 48;
    return o;
}

static void test_known_rule(void)
{
    rs = sdt_seed;
    write_corpus(path, 120, KNOWN_RULE);
    sdi_pcsr_eval_opts o = small_opts();
    o.holdout = 24;
    sdi_pcsr_eval_result r;
    long long live = sdi_alloc_live_bytes();
    SDT_OK(sdi_pcsr_evaluate(path, &o, NULL, &r));
    SDT_CHECK(sdi_alloc_live_bytes() == live, "leak");
    SDT_CHECK(r.nmatrices == 120 && r.ntasks == 240 && r.nk == 2 && r.ks[0] == 8 && r.ks[1] == 128,
              "%d matrices, %d tasks, %d K", r.nmatrices, r.ntasks, r.nk);
    SDT_CHECK(r.holdout_matrices == 24 && r.cv_matrices == 96, "split %d / %d",
              r.holdout_matrices, r.cv_matrices);
    /* Every held-out task once per seed; every other task once per seed in the CV. */
    SDT_CHECK(r.test.runs == 2 && r.test.cell[SDI_PE_DECIDER][2].n == 24 * 2 * 2,
              "test: %d runs, %d scores", r.test.runs, r.test.cell[SDI_PE_DECIDER][2].n);
    SDT_CHECK(r.cv.runs == 8 && r.cv.cell[SDI_PE_DEFAULT][2].n == 96 * 2 * 2,
              "cv: %d runs, %d scores", r.cv.runs, r.cv.cell[SDI_PE_DEFAULT][2].n);
    double g[SDI_PE_N], w5, hit[SDI_PE_N], su[SDI_PE_N];
    for (int m = 0; m < SDI_PE_N; m++)
        sdi_pcsr_cell_metrics(&r.test.cell[m][2], &g[m], &w5, &hit[m], &su[m]);
    printf("  hold-out regret: decider %.4f (hit %.2f), decider-k %.4f, default %.4f, best-fixed "
           "%.4f\n", g[0], hit[0], g[1], g[2], g[3]);
    SDT_CHECK(g[SDI_PE_DECIDER] < 1.03 && g[SDI_PE_DECIDER_K] < 1.03, "decider regret %.4f / %.4f",
              g[SDI_PE_DECIDER], g[SDI_PE_DECIDER_K]);
    SDT_CHECK(hit[SDI_PE_DECIDER] >= 0.8, "decider hit %.3f", hit[SDI_PE_DECIDER]);
    SDT_CHECK(g[SDI_PE_DEFAULT] > 1.2 && g[SDI_PE_FIXED] > 1.1, "default %.4f, best-fixed %.4f",
              g[SDI_PE_DEFAULT], g[SDI_PE_FIXED]);
    SDT_CHECK(su[SDI_PE_DECIDER] > 1.15 && su[SDI_PE_DEFAULT] == 1.0, "speed-up %.3f / %.3f",
              su[SDI_PE_DECIDER], su[SDI_PE_DEFAULT]);
    /* The default is measured everywhere; the decider's rule-best is missing on every
     * 16th matrix, so some choices are unmeasured, and those are never hits. */
    const sdi_pcsr_cell *d = &r.test.cell[SDI_PE_DECIDER][2], *cv = &r.cv.cell[SDI_PE_DECIDER][2];
    SDT_CHECK(r.test.cell[SDI_PE_DEFAULT][2].unmeasured == 0, "default unmeasured");
    SDT_CHECK(cv->unmeasured > 0 && cv->unmeasured < cv->n / 4, "cv unmeasured %d of %d",
              cv->unmeasured, cv->n);
    SDT_CHECK(d->hits + d->unmeasured <= d->n, "hits %d + unmeasured %d > %d", d->hits,
              d->unmeasured, d->n);
    double strict, sw5;
    sdi_pcsr_cell_strict(cv, &strict, &sw5);
    double nearest, x1, x2, x3;
    sdi_pcsr_cell_metrics(cv, &nearest, &x1, &x2, &x3);
    SDT_CHECK(strict > nearest && sw5 <= x1, "strict %.4f vs nearest %.4f", strict, nearest);
    for (int kp = 0; kp < 2; kp++) {
        sdi_paramspmm_params p;
        sdi_paramspmm_config_of(r.fixed[kp] >= 0 ? r.fixed[kp] : 0, &p);
        SDT_CHECK(r.fixed[kp] >= 0 && p.f == 2 && p.v == 1 && p.s == 0, "best fixed K %d: "
                  "<%d,%d,%d,%d>", r.ks[kp], p.w, p.f, p.v, p.s);
    }
    /* The report names the figures it is built from. */
    char *md = NULL;
    SDT_OK(sdi_pcsr_eval_markdown(&r, &o, "sparseditto evalmodel x --pcsr", &md));
    SDT_CHECK(md != NULL && strstr(md, "| decider |") != NULL &&
              strstr(md, "| best-fixed |") != NULL && strstr(md, "120 matrices, 240 spmm tasks") != NULL &&
              strstr(md, "`sparseditto evalmodel x --pcsr`") != NULL, "markdown:\n%s", md);
    sdi_free(md);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_pcsr_eval_json(&r, &o, "cmd", &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(strstr(j.buf, "\"best-fixed\"") != NULL && strstr(j.buf, "\"k128\"") != NULL,
              "json: %.200s", j.buf);
    sdi_json_free(&j);
    remove(path);
}

static void test_split_groups_matrices(void)
{
    rs = sdt_seed + 1;
    write_corpus(path, 40, RANDOM_LABELS);
    sdi_pcsr_eval_opts o = small_opts();
    o.holdout = 10;
    char *buf = NULL;
    size_t len = 0;
    sdi_pcsr_task *T = NULL;
    int n = 0;
    sdi_corpus c;
    memset(&c, 0, sizeof c);
    SDT_OK(sdi_model_read_file(path, &buf, &len));
    SDT_OK(sdi_pcsr_tasks_parse(buf, len, 0, &T, &n));
    SDT_OK(sdi_corpus_parse(buf, len, &c));
    SDT_CHECK(n == 80 && c.nrecords == 80, "%d tasks, %d records", n, c.nrecords);
    int role[80], held[80], nheld = 0, infold[4] = {0};
    if (n == 80 && c.nrecords == 80) {
        SDT_OK(sdi_pcsr_split_roles(&c, T, n, &o, role));
        SDT_OK(sdi_corpus_holdout(&c, o.holdout, o.split_seed, held));
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++)
                if (strcmp(T[i].matrix, T[j].matrix) == 0)
                    SDT_CHECK(role[i] == role[j], "%s split: %d / %d", T[i].matrix, role[i],
                              role[j]);
            /* Lines and records are in the same order here: the hold-out is evalmodel's. */
            SDT_CHECK((role[i] < 0) == (held[i] != 0), "task %d: role %d, held %d", i, role[i],
                      held[i]);
            nheld += role[i] < 0;
            if (role[i] >= 0 && role[i] < 4)
                infold[role[i]]++;
        }
        SDT_CHECK(nheld == 2 * o.holdout, "%d held-out tasks", nheld);
        for (int f = 0; f < 4; f++)
            SDT_CHECK(infold[f] >= 2 * 7, "fold %d: %d tasks", f, infold[f]);
    }
    sdi_free(buf);
    sdi_free(T);
    sdi_corpus_free(&c);
    /* Leak detector: labels are random per matrix, so only the same matrix's other K in
     * the training set could reveal them; grouped folds leave the decider at chance
     * (1 in 8). */
    sdi_pcsr_eval_result r;
    SDT_OK(sdi_pcsr_evaluate(path, &o, NULL, &r));
    double g, w5, hit, su;
    sdi_pcsr_cell_metrics(&r.cv.cell[SDI_PE_DECIDER][2], &g, &w5, &hit, &su);
    printf("  random labels: cross-validated hit %.3f (chance 0.125)\n", hit);
    SDT_CHECK(hit < 0.4, "hit %.3f: a matrix's tasks leaked across folds", hit);
    remove(path);
}

static void test_unmeasured_rule(void)
{
    sdi_pcsr_task t;
    memset(&t, 0, sizeof t);
    struct {
        sdi_paramspmm_params p;
        double us;
    } meas[] = {{{2, 1, 1, 0}, 10}, {{2, 4, 1, 0}, 20}, {{4, 4, 2, 1}, 5}, {{4, 4, 2, 0}, 7},
                {{4, 1, 1, 0}, 3}, {{4, 4, 1, 0}, 6}};
    for (size_t i = 0; i < sizeof meas / sizeof meas[0]; i++)
        t.us[sdi_paramspmm_config_index(&meas[i].p)] = meas[i].us;
    struct {
        sdi_paramspmm_params q;
        double want;
        int measured;
    } cases[] = {
        {{4, 4, 2, 1}, 5, 1},  /* measured: its own time */
        {{4, 4, 1, 1}, 6, 0},  /* W, F match; V before S: <4,4,1,0> (dS 1) over <4,4,2,1> (dV 1) */
        {{4, 2, 1, 0}, 6, 0},  /* |Δlog2 F| 1 both ways: the slower of <4,1,1,0> and <4,4,1,0> */
        {{8, 1, 1, 0}, 3, 0},  /* W first: <4,1,1,0> (|Δlog2 W| 1) over <2,1,1,0> (2) */
        {{1, 4, 1, 0}, 20, 0}, /* W 2 is nearer to 1 than W 4 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int m = -1;
        double us = sdi_pcsr_time_of(&t, sdi_paramspmm_config_index(&cases[i].q), &m);
        SDT_CHECK(us == cases[i].want && m == cases[i].measured, "case %zu: %g (measured %d), want "
                  "%g (%d)", i, us, m, cases[i].want, cases[i].measured);
    }
    /* Index round trip over the whole space; outside the value sets is -1. */
    for (int q = 0; q < SDI_PSPMM_NCONF; q++) {
        sdi_paramspmm_params p;
        sdi_paramspmm_config_of(q, &p);
        SDT_CHECK(sdi_paramspmm_config_index(&p) == q, "index %d", q);
    }
    sdi_paramspmm_params bad = {4, 8, 1, 0};
    SDT_CHECK(sdi_paramspmm_config_index(&bad) == -1, "F 8 is outside ParamSpMM's space");
}

static void test_no_pcsr_data(void)
{
    rs = sdt_seed + 2;
    write_corpus(path, 20, NO_PCSR);
    sdi_pcsr_eval_opts o = small_opts();
    sdi_pcsr_eval_result r;
    long long live = sdi_alloc_live_bytes();
    SDT_STATUS(sdi_pcsr_evaluate(path, &o, NULL, &r), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "no spmm task with measured ParamSpMM (PCSR)") != NULL,
              "message: %s", sd_last_error());
    SDT_CHECK(sdi_alloc_live_bytes() == live, "leak");
    /* A missing file names itself; a hold-out leaving too few matrices is refused. */
    remove(path);
    SDT_STATUS(sdi_pcsr_evaluate(path, &o, NULL, &r), SD_ERR_IO);
    rs = sdt_seed + 3;
    write_corpus(path, 20, KNOWN_RULE);
    o.holdout = 18;
    SDT_STATUS(sdi_pcsr_evaluate(path, &o, NULL, &r), SD_ERR_INVALID_ARG);
    SDT_CHECK(strstr(sd_last_error(), "hold-out") != NULL, "message: %s", sd_last_error());
    SDT_CHECK(sdi_alloc_live_bytes() == live, "leak");
    remove(path);
}

/* Allocation failures anywhere in the evaluation: an error, no leak. */
static void test_alloc_failures(void)
{
    rs = sdt_seed + 4;
    write_corpus(path, 12, KNOWN_RULE);
    sdi_pcsr_eval_opts o = small_opts();
    o.holdout = 2;
    o.folds = 2;
    o.seeds = 1;
    o.forest.ntrees = 2;
    sdi_pcsr_eval_result r;
    long long live = sdi_alloc_live_bytes();
    sdi_alloc_fail_after(-1);
    SDT_OK(sdi_pcsr_evaluate(path, &o, NULL, &r));
    long total = sdi_alloc_fail_after(-1);
    int injected = 0;
    /* Every one of the first 200 allocations, then a stride through the rest. */
    for (long n = 0; n < total; n += n < 200 ? 1 : total / 100 + 1) {
        sdi_alloc_fail_after(n);
        sd_status s = sdi_pcsr_evaluate(path, &o, NULL, &r);
        sdi_alloc_fail_after(-1);
        injected += s != SD_OK;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "failure %ld of %ld: %s (%s)", n, total,
                  sd_status_string(s), sd_last_error());
        SDT_CHECK(sdi_alloc_live_bytes() == live, "leak after failure %ld", n);
    }
    SDT_CHECK(injected >= 50, "the sweep injected %d failures (%ld allocations)", injected, total);
    remove(path);
}

int main(void)
{
    sdt_init("test_pcsr_eval");
    snprintf(path, sizeof path, "/tmp/sd-test-pcsr-eval-%d.jsonl", (int)getpid());
    SDT_RUN(test_known_rule);
    SDT_RUN(test_split_groups_matrices);
    SDT_RUN(test_unmeasured_rule);
    SDT_RUN(test_no_pcsr_data);
    SDT_RUN(test_alloc_failures);
    return sdt_finish();
}
