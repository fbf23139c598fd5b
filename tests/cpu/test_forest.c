/* tests/cpu/test_forest.c: random forests (regression of a known function, a class
 * boundary among nuisance features, determinism, JSON round trip and corrupt input) and
 * ParamSpMM's decider (features of hand-computed matrices, rules recovered, save/load,
 * the search's PCSR preset from a decider found through SPARSEDITTO_MODELS). */
#include <sys/stat.h>
#include <unistd.h>

#include "core/json_parse.h"
#include "train/forest_fit.h"
#include "model/pcsr_shipped.h"
#include "sdt.h"

static unsigned long long rs;

static double urand(double a, double b)
{
    rs = rs * 6364136223846793005ULL + 1442695040888963407ULL;
    return a + (b - a) * (double)(rs >> 11) * 0x1.0p-53;
}

static void test_regression(void)
{
    enum { N = 600, NT = 300, P = 4 };
    static double X[N * P], y[N], Xt[NT * P], yt[NT];
    rs = sdt_seed;
    for (int i = 0; i < N + NT; i++) {
        double *x = i < N ? X + i * P : Xt + (i - N) * P;
        for (int k = 0; k < P; k++)
            x[k] = urand(-2, 2);
        double v = sin(2 * x[0]) + x[1] * x[1]; /* x[2], x[3] are noise */
        if (i < N)
            y[i] = v;
        else
            yt[i - N] = v;
    }
    sdi_forest f;
    sdi_forest_opts o = sdi_forest_opts_default();
    o.seed = sdt_seed;
    SDT_OK(sdi_forest_fit(X, y, N, P, 0, &o, &f));
    double sse = 0, sst = 0, mean = 0;
    for (int i = 0; i < NT; i++)
        mean += yt[i] / NT;
    for (int i = 0; i < NT; i++) {
        double e = sdi_forest_predict(&f, Xt + i * P) - yt[i];
        sse += e * e;
        sst += (yt[i] - mean) * (yt[i] - mean);
    }
    double r2 = 1 - sse / sst;
    printf("  regression: held-out R^2 %.4f\n", r2);
    SDT_CHECK(r2 > 0.9, "R^2 %.4f", r2);
    /* A constant target gives single-leaf trees predicting it exactly. */
    double yc[N];
    for (int i = 0; i < N; i++)
        yc[i] = 3.25;
    sdi_forest c;
    SDT_OK(sdi_forest_fit(X, yc, N, P, 0, &o, &c));
    SDT_CHECK(c.trees[0].nnodes == 1 && sdi_forest_predict(&c, Xt) == 3.25, "constant");
    sdi_forest_free(&c);
    sdi_forest_free(&f);
}

/* Class = which side of x0 + x1 = 0.5 and whether x2 > 0, among 5 noise features. */
static int true_class(const double *x)
{
    return (x[0] + x[1] > 0.5 ? 1 : 0) + (x[2] > 0 ? 2 : 0);
}

/* Field by field: the node struct has padding. */
static int trees_equal(const sdi_tree *a, const sdi_tree *b)
{
    if (a->nnodes != b->nnodes)
        return 0;
    for (int i = 0; i < a->nnodes; i++) {
        const sdi_tree_node *x = &a->nodes[i], *y = &b->nodes[i];
        if (x->feature != y->feature || x->left != y->left || x->right != y->right ||
            memcmp(&x->threshold, &y->threshold, sizeof x->threshold) != 0 ||
            memcmp(&x->value, &y->value, sizeof x->value) != 0)
            return 0;
    }
    return 1;
}

static void test_classification_and_determinism(void)
{
    enum { N = 1500, NT = 400, P = 8 };
    static double X[N * P], y[N], Xt[NT * P];
    rs = sdt_seed + 1;
    for (int i = 0; i < N + NT; i++) {
        double *x = i < N ? X + i * P : Xt + (i - N) * P;
        for (int k = 0; k < P; k++)
            x[k] = urand(-1, 1);
        if (i < N)
            y[i] = true_class(x);
    }
    sdi_forest_opts o = sdi_forest_opts_default();
    o.seed = 9;
    sdi_forest f, g, h;
    double t0 = sdi_now();
    SDT_OK(sdi_forest_fit(X, y, N, P, 4, &o, &f));
    double secs = sdi_now() - t0;
    int hits = 0;
    for (int i = 0; i < NT; i++)
        hits += (int)sdi_forest_predict(&f, Xt + i * P) == true_class(Xt + i * P);
    printf("  classification: held-out accuracy %.3f (%d trees in %.3f s)\n", (double)hits / NT,
           f.ntrees, secs);
    SDT_CHECK(hits >= 0.93 * NT, "accuracy %d / %d", hits, NT);
    /* Determinism: same seed, same trees; another seed, other trees. */
    SDT_OK(sdi_forest_fit(X, y, N, P, 4, &o, &g));
    int same = f.ntrees == g.ntrees;
    for (int t = 0; same && t < f.ntrees; t++)
        same = trees_equal(&f.trees[t], &g.trees[t]);
    SDT_CHECK(same, "same seed, identical forest");
    o.seed = 10;
    SDT_OK(sdi_forest_fit(X, y, N, P, 4, &o, &h));
    int differ = 0;
    for (int t = 0; t < f.ntrees && !differ; t++)
        differ = !trees_equal(&f.trees[t], &h.trees[t]);
    SDT_CHECK(differ, "another seed, another forest");

    /* JSON round trip: identical nodes, identical predictions. */
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_forest_json(&f, &j);
    SDT_OK(sdi_json_finish(&j));
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(j.buf, -1, &v));
    sdi_forest r;
    SDT_OK(sdi_forest_from_json(&v, &r));
    same = r.ntrees == f.ntrees && r.nclass == 4 && r.nfeat == P;
    for (int t = 0; same && t < f.ntrees; t++)
        same = trees_equal(&f.trees[t], &r.trees[t]);
    SDT_CHECK(same, "JSON round trip bit-exact");
    sdi_forest_free(&r);
    sdi_jvalue_free(&v);
    /* Corrupt forests: a child pointing backwards (a cycle), a bad class, short arrays. */
    const char *cases[][2] = {
        {"{\"nfeat\":2,\"nclass\":2,\"trees\":[{\"feature\":[0,-1,-1],\"threshold\":[0.5,0,0],"
         "\"left\":[0,-1,-1],\"right\":[2,-1,-1],\"value\":[0,0,1]}]}", "node 0"},
        {"{\"nfeat\":2,\"nclass\":2,\"trees\":[{\"feature\":[-1],\"threshold\":[0],"
         "\"left\":[-1],\"right\":[-1],\"value\":[2]}]}", "node 0"},
        {"{\"nfeat\":2,\"nclass\":2,\"trees\":[{\"feature\":[-1],\"threshold\":[],"
         "\"left\":[-1],\"right\":[-1],\"value\":[1]}]}", "tree 0"},
        {"{\"nfeat\":2,\"nclass\":1,\"trees\":[]}", "nclass"},
        {"{\"nfeat\":2,\"nclass\":2,\"trees\":[{\"feature\":[5,-1,-1],\"threshold\":[0.5,0,0],"
         "\"left\":[1,-1,-1],\"right\":[2,-1,-1],\"value\":[0,0,1]}]}", "node 0"},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        long long live = sdi_alloc_live_bytes();
        SDT_OK(sdi_json_parse(cases[q][0], -1, &v));
        sd_status s = sdi_forest_from_json(&v, &r);
        SDT_CHECK(s == SD_ERR_PARSE && strstr(sd_last_error(), cases[q][1]) != NULL,
                  "case %zu: %s '%s'", q, sd_status_string(s), sd_last_error());
        sdi_jvalue_free(&v);
        SDT_CHECK(sdi_alloc_live_bytes() == live, "case %zu leaks", q);
    }
    sdi_json_free(&j);
    /* Bad inputs are errors. */
    double bad_y[1] = {4};
    SDT_STATUS(sdi_forest_fit(X, bad_y, 1, P, 4, &o, &r), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_forest_fit(X, y, N, P, 1, &o, &r), SD_ERR_INVALID_ARG);
    /* Allocation failures while fitting: an error, never a leak. */
    o.ntrees = 3;
    long long live = sdi_alloc_live_bytes();
    int injected = 0;
    for (long n = 0; n < 100000; n++) {
        sdi_alloc_fail_after(n);
        sd_status s = sdi_forest_fit(X, y, 200, P, 4, &o, &r);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sdi_forest_free(&r);
            break;
        }
        injected++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && r.trees == NULL, "failure %ld: %s", n,
                  sd_status_string(s));
        SDT_CHECK(sdi_alloc_live_bytes() == live, "leak after failure %ld", n);
    }
    SDT_CHECK(injected >= 4, "the sweep injected %d failures", injected);
    sdi_forest_free(&f);
    sdi_forest_free(&g);
    sdi_forest_free(&h);
}

static sd_csr make_csr(int rows, int cols, const int64_t *rowptr, const int32_t *colind)
{
    sd_csr a;
    memset(&a, 0, sizeof a);
    a.rows = rows;
    a.cols = cols;
    a.nnz = rowptr[rows];
    a.rowptr = (int64_t *)rowptr;
    a.colind = (int32_t *)colind;
    return a;
}

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-12 * (1 + fabs(b)))

static void test_paramspmm_features(void)
{
    /* M1: rows {0,1,3}, {1}, {}, {0,2,3} (4 × 4). Degrees 3, 1, 0, 3. */
    static const int64_t rp1[] = {0, 3, 4, 4, 7};
    static const int32_t ci1[] = {0, 1, 3, 1, 0, 2, 3};
    float v1[7] = {1, 1, 1, 1, 1, 1, 1};
    sd_csr a = make_csr(4, 4, rp1, ci1);
    a.vals = v1;
    double x[SDI_PSPMM_NFEAT];
    SDT_OK(sdi_paramspmm_features(&a, x));
    /* CV: mean 1.75, variance 6.75/4; ĈV over {3,1,3}: mean 7/3, variance 8/9. */
    double want1[SDI_PSPMM_NFEAT] = {4, 3, 7, 7.0 / 16, 1.75, 7.0 / 3, 3,
                                     sqrt(6.75 / 4) / 1.75, sqrt(8.0 / 9) / (7.0 / 3),
                                     1, 0, 0, 0, 1.0, 7, 7, 3.0 / 7, 3.0 / 7};
    for (int i = 0; i < SDI_PSPMM_NFEAT; i++)
        SDT_CHECK(NEAR(x[i], want1[i]), "M1 %s = %.15g, expected %.15g",
                  sdi_paramspmm_feature_name(i), x[i], want1[i]);

    /* M2: 40 × 20; rows 0..31 hold {0}, rows 32..39 hold {0, 15} (gap 15 > 8), one row of 300
     * entries would not fit: keep it small. Panels of 32 rows: 32 and 16 entries. */
    int64_t rp2[41];
    int32_t ci2[48];
    float v2[48];
    int64_t e = 0;
    for (int i = 0; i < 40; i++) {
        rp2[i] = e;
        ci2[e++] = 0;
        if (i >= 32)
            ci2[e++] = 15;
    }
    rp2[40] = e;
    for (int k = 0; k < 48; k++)
        v2[k] = 1;
    sd_csr b = make_csr(40, 20, rp2, ci2);
    b.vals = v2;
    SDT_OK(sdi_paramspmm_features(&b, x));
    double m = 48.0 / 40, var = (32 * (1 - m) * (1 - m) + 8 * (2 - m) * (2 - m)) / 40;
    double want2[SDI_PSPMM_NFEAT] = {40, 40, 48, 48.0 / 800, m, m, 2, sqrt(var) / m,
                                     sqrt(var) / m, 1, 0, 0, 0, 0.0, 24, 32, 2.0 / 48, 8.0 / 48};
    for (int i = 0; i < SDI_PSPMM_NFEAT; i++)
        SDT_CHECK(NEAR(x[i], want2[i]), "M2 %s = %.15g, expected %.15g",
                  sdi_paramspmm_feature_name(i), x[i], want2[i]);

    /* M3: one row of 300 consecutive columns and one of 40 (SR_4, SR_3). */
    static int64_t rp3[3] = {0, 300, 340};
    static int32_t ci3[340];
    for (int k = 0; k < 300; k++)
        ci3[k] = k;
    for (int k = 0; k < 40; k++)
        ci3[300 + k] = 2 * k;
    sd_csr c = make_csr(2, 300, rp3, ci3);
    static float v3[340];
    c.vals = v3;
    SDT_OK(sdi_paramspmm_features(&c, x));
    SDT_CHECK(x[11] == 0.5 && x[12] == 0.5 && x[9] == 0 && x[10] == 0, "SR %g %g %g %g", x[9],
              x[10], x[11], x[12]);
    SDT_CHECK(NEAR(x[13], 338.0 / 338), "rho %g", x[13]);
    SDT_CHECK(NEAR(x[16], 300.0 / 340) && NEAR(x[17], 300.0 / 340), "PR %g %g", x[16], x[17]);

    /* Empty matrix: all ratios 0. */
    static const int64_t rp0[] = {0, 0, 0};
    sd_csr z = make_csr(2, 3, rp0, NULL);
    SDT_OK(sdi_paramspmm_features(&z, x));
    SDT_CHECK(x[0] == 2 && x[1] == 0 && x[7] == 0 && x[13] == 0 && x[14] == 0 && x[16] == 0,
              "empty");
    /* A broken structure is an error. */
    static const int64_t rpb[] = {0, 2, 1};
    static const int32_t cib[] = {0, 1};
    sd_csr bad = make_csr(2, 3, rpb, cib);
    SDT_CHECK(sdi_paramspmm_features(&bad, x) != SD_OK, "non-monotone rowptr rejected");
}

/* The rules the synthetic decider data follow. */
static void rules(const double *x, sdi_paramspmm_params *p)
{
    double dh = x[5];
    p->w = dh < 4 ? 1 : dh < 32 ? 2 : dh < 128 ? 4 : 8;
    p->f = x[13] > 0.6 ? 4 : x[13] > 0.3 ? 2 : 1;
    p->v = dh >= 16 ? 2 : 1;
    p->s = x[8] > 1.0 ? 1 : 0;
}

static void synth_features(double *x)
{
    for (int i = 0; i < SDI_PSPMM_NFEAT; i++)
        x[i] = urand(0, 1);
    x[0] = exp(urand(log(1e3), log(1e7)));
    x[5] = exp(urand(log(1), log(512)));
    x[8] = urand(0, 3);
    x[13] = urand(0, 1);
}

static void test_paramspmm_decider(void)
{
    enum { N = 600, NT = 300 };
    static double X[N * SDI_PSPMM_NFEAT];
    static sdi_paramspmm_params y[N];
    rs = sdt_seed + 2;
    for (int i = 0; i < N; i++) {
        synth_features(X + i * SDI_PSPMM_NFEAT);
        rules(X + i * SDI_PSPMM_NFEAT, &y[i]);
    }
    sdi_forest_opts o = sdi_forest_opts_default();
    o.ntrees = 32;
    sdi_paramspmm_decider d, r;
    SDT_OK(sdi_paramspmm_decider_fit(X, y, N, &o, &d));
    int hits = 0, all_same = 1;
    char path[64];
    snprintf(path, sizeof path, "/tmp/sd-test-forest-%d.json", (int)getpid());
    SDT_OK(sdi_paramspmm_decider_save(&d, path));
    SDT_OK(sdi_paramspmm_decider_load(path, &r));
    for (int i = 0; i < NT; i++) {
        double x[SDI_PSPMM_NFEAT];
        synth_features(x);
        sdi_paramspmm_params want, got, got2;
        rules(x, &want);
        sdi_paramspmm_decide(&d, x, &got);
        sdi_paramspmm_decide(&r, x, &got2);
        hits += got.w == want.w && got.f == want.f && got.v == want.v && got.s == want.s;
        all_same &= memcmp(&got, &got2, sizeof got) == 0;
    }
    printf("  decider: all four parameters right on %d / %d held-out inputs\n", hits, NT);
    SDT_CHECK(hits >= 0.9 * NT, "decider %d / %d", hits, NT);
    SDT_CHECK(all_same, "the loaded decider decides the same");
    sdi_paramspmm_decider_free(&r);
    /* A file with other feature names or a missing forest is refused, without leaks. */
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs("{\"format\":\"sparseditto-paramspmm\",\"version\":1,\"features\":[\"n\"],"
              "\"forests\":{}}", f);
        fclose(f);
    }
    long long live = sdi_alloc_live_bytes();
    SDT_STATUS(sdi_paramspmm_decider_load(path, &r), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "features") != NULL, "message '%s'", sd_last_error());
    SDT_CHECK(sdi_alloc_live_bytes() == live, "leak");
    remove(path);
    SDT_STATUS(sdi_paramspmm_decider_load(path, &r), SD_ERR_IO);
    y[3].w = 3;
    SDT_STATUS(sdi_paramspmm_decider_fit(X, y, N, &o, &r), SD_ERR_INVALID_ARG);
    sdi_paramspmm_decider_free(&d);
}

/* Per-K deciders: when the best W depends on K as well as on the features, one decider
 * per K learns it, a pooled one cannot (K is not a feature); the version-2 file round
 * trips; a version-1 file loads as one member for every K; bad members are refused. */
static void test_paramspmm_deciders(void)
{
    enum { N = 800, NT = 200 };
    static double X[N * SDI_PSPMM_NFEAT];
    static sdi_paramspmm_params y[N];
    static int ks[N];
    static const int kv[4] = {8, 32, 128, 256};
    rs = sdt_seed + 3;
    for (int i = 0; i < N; i++) {
        synth_features(X + i * SDI_PSPMM_NFEAT);
        rules(X + i * SDI_PSPMM_NFEAT, &y[i]);
        ks[i] = kv[i % 4];
        if (ks[i] >= 128) /* wide B: more coarsening, whatever the matrix */
            y[i].f = 4;
    }
    sdi_forest_opts o = sdi_forest_opts_default();
    o.ntrees = 24;
    sdi_paramspmm_deciders d, r;
    sdi_paramspmm_decider pooled;
    SDT_OK(sdi_paramspmm_deciders_fit(X, y, ks, N, &o, &d));
    SDT_OK(sdi_paramspmm_decider_fit(X, y, N, &o, &pooled));
    SDT_CHECK(d.n == 4 && d.k[0] == 8 && d.k[3] == 256, "%d members, K %d .. %d", d.n, d.k[0],
              d.k[d.n - 1]);
    char path[64];
    snprintf(path, sizeof path, "/tmp/sd-test-deciders-%d.json", (int)getpid());
    SDT_OK(sdi_paramspmm_deciders_save(&d, path));
    SDT_OK(sdi_paramspmm_deciders_load(path, &r));
    int hit_k = 0, hit_pooled = 0, all_same = 1;
    for (int i = 0; i < NT; i++) {
        double x[SDI_PSPMM_NFEAT];
        synth_features(x);
        int k = kv[i % 4];
        sdi_paramspmm_params want, got, got2, gp;
        rules(x, &want);
        if (k >= 128)
            want.f = 4;
        sdi_paramspmm_decide(sdi_paramspmm_deciders_for(&d, k), x, &got);
        sdi_paramspmm_decide(sdi_paramspmm_deciders_for(&r, k), x, &got2);
        sdi_paramspmm_decide(&pooled, x, &gp);
        hit_k += got.f == want.f;
        hit_pooled += gp.f == want.f;
        all_same &= memcmp(&got, &got2, sizeof got) == 0;
    }
    printf("  F right: per-K deciders %d / %d, pooled %d / %d\n", hit_k, NT, hit_pooled, NT);
    SDT_CHECK(hit_k >= 0.9 * NT && hit_pooled < hit_k, "per-K %d, pooled %d", hit_k, hit_pooled);
    SDT_CHECK(all_same, "the loaded deciders decide the same");
    /* the nearest K in log2: 16 is as near to 8 as to 32 (the smaller wins), 100 -> 128 */
    SDT_CHECK(sdi_paramspmm_deciders_for(&d, 16) == &d.d[0] &&
                  sdi_paramspmm_deciders_for(&d, 100) == &d.d[2] &&
                  sdi_paramspmm_deciders_for(&d, 4096) == &d.d[3] &&
                  sdi_paramspmm_deciders_for(&d, 1) == &d.d[0], "nearest member");
    /* a version-2 file is not a single decider; a version-1 file is one member for any K */
    sdi_paramspmm_decider one;
    SDT_STATUS(sdi_paramspmm_decider_load(path, &one), SD_ERR_PARSE);
    sdi_paramspmm_deciders_free(&r);
    SDT_OK(sdi_paramspmm_decider_save(&pooled, path));
    SDT_OK(sdi_paramspmm_deciders_load(path, &r));
    SDT_CHECK(r.n == 1 && r.k[0] == 0 && sdi_paramspmm_deciders_for(&r, 77) == &r.d[0],
              "version 1 as deciders: %d members, k %d", r.n, r.k[0]);
    sdi_paramspmm_deciders_free(&r);
    /* members out of order: refused, without leaks */
    int tmp = d.k[1];
    d.k[1] = d.k[2];
    d.k[2] = tmp;
    SDT_OK(sdi_paramspmm_deciders_save(&d, path));
    long long live = sdi_alloc_live_bytes();
    SDT_STATUS(sdi_paramspmm_deciders_load(path, &r), SD_ERR_PARSE);
    SDT_CHECK(strstr(sd_last_error(), "member 2") != NULL, "message '%s'", sd_last_error());
    SDT_CHECK(sdi_alloc_live_bytes() == live, "leak");
    remove(path);
    ks[5] = 0;
    SDT_STATUS(sdi_paramspmm_deciders_fit(X, y, ks, N, &o, &r), SD_ERR_INVALID_ARG);
    sdi_paramspmm_deciders_free(&d);
    sdi_paramspmm_decider_free(&pooled);
}

/* The search's PCSR preset (pcsr_shipped.h): a paramspmm.json in SPARSEDITTO_MODELS
 * chooses the PCSR branch's first configuration, as the sweep spells it; a choice outside
 * the sweep for K, a corrupt file, no file and an empty SPARSEDITTO_MODELS all keep the
 * PCSR default, with a note and without leaks. */
static void test_search_preset(void)
{
    /* A banded 3000 × 3000 matrix, 5 entries a row (fewer at the edges). */
    enum { N = 3000 };
    static int64_t rp[N + 1];
    static int32_t ci[5 * N];
    static float vv[5 * N];
    int64_t e = 0;
    for (int i = 0; i < N; i++) {
        rp[i] = e;
        for (int j = i - 2; j <= i + 2; j++)
            if (j >= 0 && j < N) {
                vv[e] = 1.0f;
                ci[e++] = j;
            }
    }
    rp[N] = e;
    sd_csr a = make_csr(N, N, rp, ci);
    a.vals = vv;
    sdi_spmm_stats st;
    sdi_spmm_stats_compute(&a, &st);
    sdi_spmm_config def, c;
    SDT_OK(sdi_spmm_config_default(SDI_SPMM_PCSR, 32, &st, &def));

    /* Deciders that answer <W 2, F 1, V 1, S 1> for every input (K = 32: in the sweep, and
     * not the default, which has W 4 and V 2). */
    enum { M = 40 };
    static double X[M * SDI_PSPMM_NFEAT];
    static sdi_paramspmm_params y[M];
    static int ks[M];
    rs = sdt_seed + 4;
    for (int i = 0; i < M; i++) {
        synth_features(X + i * SDI_PSPMM_NFEAT);
        y[i] = (sdi_paramspmm_params){2, 1, 1, 1};
        ks[i] = i % 2 ? 32 : 128;
    }
    sdi_forest_opts o = sdi_forest_opts_default();
    o.ntrees = 4;
    sdi_paramspmm_deciders d;
    SDT_OK(sdi_paramspmm_deciders_fit(X, y, ks, M, &o, &d));
    SDT_CHECK(def.warps != 2 || def.pcsr_v != 1, "the default is not the decider's choice");

    char dir[96], path[128], why[400];
    snprintf(dir, sizeof dir, "/tmp/sd-test-preset-%d", (int)getpid());
    snprintf(path, sizeof path, "%s/paramspmm.json", dir);
    mkdir(dir, 0777);
    SDT_OK(sdi_paramspmm_deciders_save(&d, path));
    setenv("SPARSEDITTO_MODELS", dir, 1);
    sdi_config_reload();
    sdi_paramspmm_shipped_reload();
    int decided = -1;
    SDT_OK(sdi_paramspmm_preset(&a, 32, &st, NULL, &c, &decided, why, sizeof why));
    SDT_CHECK(decided == 1 && c.tmpl == SDI_SPMM_PCSR && c.warps == 2 && c.coarsen == 1 &&
                  c.pcsr_v == 1 && c.pcsr_s == 1 && c.pcsr_group == 32 && c.k == 32,
              "decided %d: W %d F %d V %d S %d group %d (%s)", decided, c.warps, c.coarsen,
              c.pcsr_v, c.pcsr_s, c.pcsr_group, why);
    SDT_CHECK(strstr(why, "paramspmm.json") != NULL, "why: %s", why);
    /* the preset is the sweep's own configuration, field for field */
    sdi_spmm_config *all = NULL;
    int nall = 0, same = 0;
    SDT_OK(sdi_spmm_enumerate_pcsr(&a, 32, 0, &all, &nall));
    for (int i = 0; i < nall; i++)
        same += memcmp(&all[i], &c, sizeof c) == 0;
    sdi_free(all);
    SDT_CHECK(same == 1, "the preset matches %d sweep configurations", same);

    /* F 4 at K = 32 idles lanes: not in the sweep, so the default stays. */
    for (int i = 0; i < M; i++)
        y[i].f = 4;
    sdi_paramspmm_deciders wide;
    SDT_OK(sdi_paramspmm_deciders_fit(X, y, ks, M, &o, &wide));
    SDT_OK(sdi_paramspmm_preset(&a, 32, &st, &wide, &c, &decided, why, sizeof why));
    SDT_CHECK(decided == 0 && memcmp(&c, &def, sizeof c) == 0 &&
                  strstr(why, "not in the PCSR sweep") != NULL, "decided %d (%s)", decided, why);
    sdi_paramspmm_deciders_free(&wide);

    /* A corrupt file: the default, a note, no error, no leak. */
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        fputs("{\"format\":\"sparseditto-paramspmm\",\"version\":2,\"members\":[", f);
        fclose(f);
    }
    sdi_paramspmm_shipped_reload(); /* frees the good decider */
    long long live = sdi_alloc_live_bytes();
    SDT_OK(sdi_paramspmm_preset(&a, 32, &st, NULL, &c, &decided, why, sizeof why));
    SDT_CHECK(decided == 0 && memcmp(&c, &def, sizeof c) == 0 &&
                  strstr(why, "unusable decider") != NULL, "corrupt: decided %d (%s)", decided, why);
    sdi_error_clear();
    /* No file in the directory, then an empty SPARSEDITTO_MODELS. */
    remove(path);
    sdi_paramspmm_shipped_reload();
    SDT_OK(sdi_paramspmm_preset(&a, 32, &st, NULL, &c, &decided, why, sizeof why));
    SDT_CHECK(decided == 0 && strstr(why, "no paramspmm.json found") != NULL, "none: %s", why);
    setenv("SPARSEDITTO_MODELS", "", 1);
    sdi_config_reload();
    sdi_paramspmm_shipped_reload();
    SDT_OK(sdi_paramspmm_preset(&a, 32, &st, NULL, &c, &decided, why, sizeof why));
    SDT_CHECK(decided == 0 && strstr(why, "SPARSEDITTO_MODELS is empty") != NULL, "empty: %s", why);
    SDT_CHECK(sdi_alloc_live_bytes() == live, "leak");
    unsetenv("SPARSEDITTO_MODELS");
    sdi_config_reload();
    sdi_paramspmm_shipped_reload();
    rmdir(dir);
    sdi_paramspmm_deciders_free(&d);
}

int main(void)
{
    sdt_init("test_forest");
    SDT_RUN(test_regression);
    SDT_RUN(test_classification_and_determinism);
    SDT_RUN(test_paramspmm_features);
    SDT_RUN(test_paramspmm_decider);
    SDT_RUN(test_paramspmm_deciders);
    SDT_RUN(test_search_preset);
    return sdt_finish();
}
