/* tests/cpu/test_rankers.c: the baselines of the ranking comparison and the evaluation
 * protocol: the MLP's analytic gradient against central differences, MLP and
 * gradient-boosting determinism, boosting on a known function beats a constant by a
 * margin, every ranker recovers the synthetic corpus's known best templates on held-out
 * matrices, stratified grouped folds and the hold-out split, and the protocol's tables. */
#include <math.h>

#include "core/rng.h"
#include "evalmodel/rankers.h"
#include "sdt.h"

static void test_mlp_gradient(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 3, &c)); /* 9 tasks of all three operators */
    sdi_energy_model sc;
    SDT_OK(sdi_energy_model_alloc(&sc, 1));
    sdi_energy_fit_standardization(&sc, &c);
    sdi_mlp m;
    SDT_OK(sdi_mlp_alloc(&m, 5));
    sdi_mlp_init(&m, sdt_seed);
    for (int i = 0; i < m.nout; i++) /* non-trivial biases and outputs: every term matters */
        m.b2[i] = 0.1 * (i % 5) - 0.2;
    for (long i = 0; i < (long)m.nout * m.hidden; i++)
        m.w2[i] *= 20.0;
    double lambda[3] = {0.3, 0.5, 0.7}, T = 0.5;
    double *g = calloc((size_t)m.nparams, sizeof *g);
    double X[9][SDI_EM_NIN];
    for (int t = 0; t < c.ntasks; t++) {
        const sdi_corpus_task *k = &c.tasks[t];
        sdi_energy_inputs(&sc, c.records[k->record].features, c.records[k->record].shape, k->op,
                          k->k, X[t]);
    }
#define TOTAL(gr)                                                                          \
    ({                                                                                     \
        double s_ = 0;                                                                     \
        for (int t = 0; t < c.ntasks; t++) {                                               \
            const sdi_corpus_task *k = &c.tasks[t];                                        \
            s_ += sdi_mlp_task_loss(&m, X[t], sc.toff[k->op], sc.ntemp[k->op], k->us,       \
                                    k->baseline_us, lambda[k->op], T, 1.0, (gr));           \
        }                                                                                  \
        s_;                                                                                \
    })
    double l0 = TOTAL(g);
    SDT_CHECK(l0 > 0 && isfinite(l0), "loss %g", l0);
    int bad = 0, checked = 0, nonzero = 0;
    double worst = 0;
    for (long i = 0; i < m.nparams; i++) {
        double keep = m.theta[i], h = 1e-5 * (1 + fabs(keep));
        m.theta[i] = keep + h;
        double lp = TOTAL(NULL);
        m.theta[i] = keep - h;
        double lm = TOTAL(NULL);
        m.theta[i] = keep;
        double fd = (lp - lm) / (2 * h), err = fabs(fd - g[i]) / (1e-6 + fabs(fd) + fabs(g[i]));
        checked++;
        nonzero += fabs(g[i]) > 1e-8;
        if (err > 1e-4 && fabs(fd - g[i]) > 1e-7) {
            if (bad++ < 5)
                fprintf(stderr, "  param %ld: analytic %.9g, finite difference %.9g\n", i, g[i], fd);
        }
        worst = err > worst && fabs(fd - g[i]) > 1e-7 ? err : worst;
    }
#undef TOTAL
    SDT_CHECK(bad == 0, "%d of %d parameters disagree (worst relative error %.3g)", bad, checked, worst);
    SDT_CHECK(nonzero > m.nparams / 4, "only %d nonzero gradient entries of %ld", nonzero, m.nparams);
    free(g);
    sdi_mlp_free(&m);
    sdi_energy_model_free(&sc);
    sdi_corpus_free(&c);
}

/* Top-1 of a trained ranker on a synthetic corpus against the known best template. */
static double known_top1(const sdi_ranker *r, const sdi_corpus *c)
{
    int hits = 0;
    double E[SDI_RANK_MAX_TEMPLATES];
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *k = &c->tasks[t];
        int nv = 0, ch = -1;
        sdi_vocabulary(k->op, &nv);
        sdi_ranker_scores(r, c, t, E);
        for (int s = 0; s < nv; s++)
            if (k->us[s] > 0 && (ch < 0 || E[s] < E[ch]))
                ch = s;
        hits += ch == sdi_corpus_synthetic_best(c->records[k->record].features, k->op, k->k);
    }
    return c->ntasks > 0 ? (double)hits / c->ntasks : 0;
}

static void test_rankers_recover_rules(void)
{
    sdi_corpus train, test;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 200, &train));
    SDT_OK(sdi_corpus_synthetic(sdt_seed + 1, 60, &test));
    sdi_ranker_opts o = sdi_ranker_opts_default();
    o.seed = sdt_seed;
    /* Thresholds: the rules are axis-aligned thresholds on two features per operator;
     * trees find them exactly, the smooth models nearly. */
    static const double want[SDI_RANKER_COUNT] = {0.9, 0.85, 0.8, 0.9, 0.9, 0};
    for (int k = 0; k < SDI_RANKER_COUNT; k++) {
        sdi_ranker r;
        double t0 = sdi_now();
        SDT_OK(sdi_ranker_train((sdi_ranker_kind)k, &train, &o, &r));
        double secs = sdi_now() - t0;
        double top1 = known_top1(&r, &test);
        sdi_ranker_metrics m;
        sdi_ranker_evaluate(&r, &test, &m);
        printf("  %-16s held-out known-best top-1 %.3f, regret %.4f, capture %.3f, cliff %.3f "
               "(trained in %.2f s)\n", sdi_ranker_name(k), top1, m.all.regret, m.all.capture,
               m.all.cliff, secs);
        SDT_CHECK(top1 >= want[k], "%s: top-1 %.3f < %.2f", sdi_ranker_name(k), top1, want[k]);
        SDT_CHECK(m.all.ntasks == test.ntasks, "%s: %d tasks scored", sdi_ranker_name(k), m.all.ntasks);
        SDT_CHECK(m.op[SD_OP_SPMV].ntasks == 60 && m.op[SD_OP_SPMM].ntasks == 60 &&
                  m.op[SD_OP_SPGEMM].ntasks == 60, "per-op task counts");
        SDT_CHECK(m.all.regret >= 1.0, "regret %g < 1", m.all.regret);
        /* The best of the top 3 is never worse than the top choice. */
        for (int op = 0; op <= SDI_EM_NOP; op++) {
            const sdi_energy_metrics *e = op < SDI_EM_NOP ? &m.op[op] : &m.all;
            SDT_CHECK(e->top3 >= e->top1 && e->top3 <= 1.0 && e->regret3 <= e->regret + 1e-12 &&
                          e->regret3 >= 1.0,
                      "%s op %d: top-1 %.3f top-3 %.3f regret %.4f regret@3 %.4f", sdi_ranker_name(k), op,
                      e->top1, e->top3, e->regret, e->regret3);
        }
        sdi_ranker_free(&r);
    }
    sdi_corpus_free(&train);
    sdi_corpus_free(&test);
}

static void test_determinism(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 40, &c));
    sdi_ranker_opts o = sdi_ranker_opts_default();
    o.mlp.epochs = 10;
    o.gbt.rounds = 15;
    for (int k = SDI_RANKER_MLP; k <= SDI_RANKER_FOREST; k++) {
        sdi_ranker a, b, d;
        o.seed = 5;
        SDT_OK(sdi_ranker_train((sdi_ranker_kind)k, &c, &o, &a));
        SDT_OK(sdi_ranker_train((sdi_ranker_kind)k, &c, &o, &b));
        o.seed = 6;
        SDT_OK(sdi_ranker_train((sdi_ranker_kind)k, &c, &o, &d));
        int same = 1, differ = 0;
        double Ea[SDI_RANK_MAX_TEMPLATES], Eb[SDI_RANK_MAX_TEMPLATES], Ed[SDI_RANK_MAX_TEMPLATES];
        for (int t = 0; t < c.ntasks; t++) {
            sdi_ranker_scores(&a, &c, t, Ea);
            sdi_ranker_scores(&b, &c, t, Eb);
            sdi_ranker_scores(&d, &c, t, Ed);
            int nv = 0;
            sdi_vocabulary(c.tasks[t].op, &nv);
            same &= memcmp(Ea, Eb, sizeof(double) * (size_t)nv) == 0;
            differ |= memcmp(Ea, Ed, sizeof(double) * (size_t)nv) != 0;
        }
        SDT_CHECK(same, "%s: same seed, different scores", sdi_ranker_name(k));
        SDT_CHECK(differ, "%s: the seed changes nothing", sdi_ranker_name(k));
        sdi_ranker_free(&a);
        sdi_ranker_free(&b);
        sdi_ranker_free(&d);
    }
    sdi_corpus_free(&c);
}

/* y = sin(2 x0) + x1² − 0.5·[x2 > 0] + noise on 3 of 6 features. */
static double gbt_truth(const double *x)
{
    return sin(2 * x[0]) + x[1] * x[1] - 0.5 * (x[2] > 0);
}

static void test_gbt_beats_constant(void)
{
    enum { N = 600, NT = 300, P = 6 };
    static double X[N][P], y[N], Xt[NT][P], yt[NT];
    sdi_rng r;
    sdi_rng_seed(&r, sdt_seed, 77, 0);
    for (int i = 0; i < N + NT; i++) {
        double *x = i < N ? X[i] : Xt[i - N];
        for (int j = 0; j < P; j++)
            x[j] = 4 * sdi_rng_uniform(&r) - 2;
        double v = gbt_truth(x) + 0.1 * (sdi_rng_uniform(&r) - 0.5);
        if (i < N)
            y[i] = v;
        else
            yt[i - N] = v;
    }
    sdi_gbt_opts o = sdi_gbt_opts_default();
    o.seed = sdt_seed;
    o.rounds = 150;
    sdi_gbt g, g2;
    SDT_OK(sdi_gbt_fit(&X[0][0], y, N, P, &o, &g));
    SDT_OK(sdi_gbt_fit(&X[0][0], y, N, P, &o, &g2));
    double mean = 0, mse = 0, mse0 = 0;
    for (int i = 0; i < N; i++)
        mean += y[i] / N;
    int same = 1;
    for (int i = 0; i < NT; i++) {
        double p = sdi_gbt_predict(&g, Xt[i]);
        same &= p == sdi_gbt_predict(&g2, Xt[i]);
        mse += (p - yt[i]) * (p - yt[i]) / NT;
        mse0 += (mean - yt[i]) * (mean - yt[i]) / NT;
    }
    printf("  gbt held-out MSE %.4f vs constant %.4f (%d rounds)\n", mse, mse0, g.nrounds);
    SDT_CHECK(mse < 0.15 * mse0, "boosting MSE %.4f is not < 15 %% of the constant's %.4f", mse, mse0);
    SDT_CHECK(same, "same seed, different predictions");
    SDT_CHECK(g.nrounds == 150, "rounds %d", g.nrounds);
    sdi_gbt_free(&g);
    sdi_gbt_free(&g2);
    sdi_gbt bad;
    o.shrink = 0;
    SDT_STATUS(sdi_gbt_fit(&X[0][0], y, N, P, &o, &bad), SD_ERR_INVALID_ARG);
    o = sdi_gbt_opts_default();
    y[3] = NAN;
    SDT_STATUS(sdi_gbt_fit(&X[0][0], y, N, P, &o, &bad), SD_ERR_INVALID_ARG);
}

static void test_stratified_splits(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 123, &c));
    /* Duplicate every record's matrix name into a second record (a task per line, as the
     * corpus builder writes): grouping must keep them together. */
    int n = c.nrecords;
    int *fold = calloc((size_t)n, sizeof *fold), *fold2 = calloc((size_t)n, sizeof *fold2);
    int *held = calloc((size_t)n, sizeof *held);
    for (int r = 1; r < n; r += 2)
        memcpy(c.records[r].matrix, c.records[r - 1].matrix, sizeof c.records[r].matrix);
    SDT_OK(sdi_corpus_folds_stratified(&c, 5, 7, fold));
    SDT_OK(sdi_corpus_folds_stratified(&c, 5, 7, fold2));
    SDT_CHECK(memcmp(fold, fold2, sizeof(int) * (size_t)n) == 0, "same seed, other folds");
    int per[5][5] = {{0}}, cls[5] = {0}, matrices = 0;
    for (int r = 0; r < n; r++) {
        SDT_CHECK(fold[r] >= 0 && fold[r] < 5, "record %d fold %d", r, fold[r]);
        if (r % 2 == 1)
            SDT_CHECK(fold[r] == fold[r - 1], "records of one matrix in folds %d and %d", fold[r - 1], fold[r]);
        if (r % 2 == 0 || r == n - 1) { /* one count per matrix (the shape of its first record) */
            per[c.records[r].shape][fold[r]]++;
            cls[c.records[r].shape]++;
            matrices++;
        }
    }
    for (int s = 0; s < 5; s++)
        for (int f = 0; f < 5; f++) {
            double want = cls[s] / 5.0;
            SDT_CHECK(fabs(per[s][f] - want) <= 1.0 + 1e-9, "class %d fold %d: %d matrices, expected %.1f ± 1",
                      s, f, per[s][f], want);
        }
    SDT_OK(sdi_corpus_folds_stratified(&c, 5, 8, fold2));
    SDT_CHECK(memcmp(fold, fold2, sizeof(int) * (size_t)n) != 0, "the split seed changes nothing");
    SDT_OK(sdi_corpus_holdout(&c, 20, 7, held));
    int nh = 0, hcls[5] = {0};
    for (int r = 0; r < n; r++) {
        if (r % 2 == 1)
            SDT_CHECK(held[r] == held[r - 1], "a matrix split by the hold-out");
        if ((r % 2 == 0 || r == n - 1) && held[r]) {
            nh++;
            hcls[c.records[r].shape]++;
        }
    }
    SDT_CHECK(nh == 20, "%d matrices held out, expected 20", nh);
    for (int s = 0; s < 5; s++)
        SDT_CHECK(fabs(hcls[s] - 20.0 * cls[s] / matrices) <= 1.0 + 1e-9, "hold-out class %d: %d of %d",
                  s, hcls[s], cls[s]);
    SDT_STATUS(sdi_corpus_holdout(&c, matrices, 7, held), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_corpus_folds_stratified(&c, 1, 7, fold), SD_ERR_INVALID_ARG);
    free(fold);
    free(fold2);
    free(held);
    sdi_corpus_free(&c);
}

static void test_protocol(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 60, &c));
    sdi_model_eval_opts o = sdi_model_eval_opts_default();
    o.folds = 3;
    o.seeds = 2;
    o.holdout = 12;
    o.kinds = (1u << SDI_RANKER_ENERGY) | (1u << SDI_RANKER_GBT) | (1u << SDI_RANKER_RULES);
    o.ranker.energy.epochs = 30;
    o.ranker.gbt.rounds = 30;
    sdi_model_eval_result r;
    SDT_OK(sdi_model_evaluate(&c, &o, NULL, &r));
    SDT_CHECK(r.nmatrices == 60 && r.holdout_matrices == 12 && r.cv_matrices == 48,
              "matrices %d / %d / %d", r.nmatrices, r.holdout_matrices, r.cv_matrices);
    SDT_CHECK(r.kind[SDI_RANKER_ENERGY].cv.n == 6 && r.kind[SDI_RANKER_ENERGY].test.n == 2,
              "energy runs %d / %d", r.kind[SDI_RANKER_ENERGY].cv.n, r.kind[SDI_RANKER_ENERGY].test.n);
    SDT_CHECK(r.kind[SDI_RANKER_RULES].cv.n == 3 && r.kind[SDI_RANKER_RULES].test.n == 1,
              "rules runs %d / %d", r.kind[SDI_RANKER_RULES].cv.n, r.kind[SDI_RANKER_RULES].test.n);
    SDT_CHECK(!r.kind[SDI_RANKER_MLP].evaluated, "mlp evaluated though not asked for");
    SDT_CHECK(r.kind[SDI_RANKER_ENERGY].test.mean.op[SD_OP_SPMV].ntasks == 12, "test spmv tasks %d",
              r.kind[SDI_RANKER_ENERGY].test.mean.op[SD_OP_SPMV].ntasks);
    SDT_CHECK(r.kind[SDI_RANKER_GBT].cv.mean.all.top1 > 0.7, "gbt cv top-1 %.3f",
              r.kind[SDI_RANKER_GBT].cv.mean.all.top1);
    SDT_CHECK(r.kind[SDI_RANKER_ENERGY].rank_us > 0 && r.kind[SDI_RANKER_ENERGY].train_s > 0,
              "times %g / %g", r.kind[SDI_RANKER_ENERGY].rank_us, r.kind[SDI_RANKER_ENERGY].train_s);
    char *md = NULL;
    SDT_OK(sdi_model_eval_markdown(&r, &o, &md));
    SDT_CHECK(md != NULL && strstr(md, "| energy-v1 |") && strstr(md, "| gbt |") &&
              strstr(md, "Held-out test set: 12 matrices") && !strstr(md, "| mlp |"), "markdown:\n%s",
              md ? md : "(null)");
    sdi_free(md);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_model_eval_json(&r, &o, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(strstr(j.buf, "\"name\":\"rules-v1\"") != NULL || strstr(j.buf, "\"name\": \"rules-v1\"") != NULL,
              "json: %.300s", j.buf);
    sdi_json_free(&j);
    o.holdout = 50; /* leaves 10 matrices for 3 folds: fine; 58 would not be */
    SDT_OK(sdi_model_evaluate(&c, &o, NULL, &r));
    o.holdout = 58;
    SDT_STATUS(sdi_model_evaluate(&c, &o, NULL, &r), SD_ERR_INVALID_ARG);
    sdi_corpus_free(&c);
}

/* The fastest of the k lowest-score measured entries, on a hand example. */
static void test_best_of_top(void)
{
    const double E[6] = {0.5, -1.0, 2.0, -0.5, 0.0, -2.0};
    const double us[6] = {10, 30, 5, 20, 8, 0 /* unmeasured */};
    /* Measured by score: 1 (-1.0, 30 us), 3 (-0.5, 20), 4 (0.0, 8), 0 (0.5, 10), 2 (2.0, 5). */
    SDT_CHECK(sdi_best_of_top(E, us, 6, 1) == 1, "top 1 -> 1");
    SDT_CHECK(sdi_best_of_top(E, us, 6, 2) == 3, "top 2 -> 3");
    SDT_CHECK(sdi_best_of_top(E, us, 6, 3) == 4, "top 3 -> 4");
    SDT_CHECK(sdi_best_of_top(E, us, 6, 6) == 2, "all -> the fastest, 2");
    const double none[3] = {0, 0, 0};
    SDT_CHECK(sdi_best_of_top(E, none, 3, 3) == -1, "nothing measured -> -1");
}

int main(void)
{
    sdt_init("test_rankers");
    SDT_RUN(test_best_of_top);
    SDT_RUN(test_mlp_gradient);
    SDT_RUN(test_gbt_beats_constant);
    SDT_RUN(test_determinism);
    SDT_RUN(test_stratified_splits);
    SDT_RUN(test_protocol);
    SDT_RUN(test_rankers_recover_rules);
    return sdt_finish();
}
