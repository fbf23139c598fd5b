/* tests/cpu/test_energy.c: the learned energy model: analytic gradient against central
 * differences for every parameter block, training on a synthetic corpus recovers the
 * known best template per region, weights and corpus I/O round trips, corrupt weight
 * files, determinism, ranking with per-feature reasons; seed ensembles (members as
 * trained alone, mean energy and contributions, file round trip, version 1 files, bad
 * member counts); SpMM K heads (gradient, K → bucket, contributions, file layout) and
 * files without them loading as before. */
#include <unistd.h>

#include "core/json_parse.h"
#include "train/energy_train.h"
#include "sdt.h"

static char tmpdir_path[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][320];
    static int slot;
    char *b = buf[slot++ & 3];
    snprintf(b, 320, "%s/%s", tmpdir_path, name);
    return b;
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f != NULL) {
        fwrite(text, 1, len, f);
        fclose(f);
    }
}

static void expect_bad(const char *label, const char *text, size_t len, const char *want);
static char *replace(const char *text, const char *from, const char *to);

/* Loss summed over the tasks of c (λ, T of m), gradient into g when not NULL. */
static double total_loss(const sdi_energy_model *m, const sdi_corpus *c, double *g)
{
    double x[SDI_EM_NIN], sum = 0;
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *task = &c->tasks[t];
        const sdi_corpus_record *r = &c->records[task->record];
        sdi_energy_inputs(m, r->features, r->shape, task->op, task->k, x);
        sum += sdi_energy_task_loss(m, x, task->op, task->us, task->baseline_us,
                                    m->lambda[task->op], m->temperature, 1.0, g);
    }
    return sum;
}

/* The analytic gradient of m (initialised; its β and w2 are made non-trivial here) on c
 * against central differences, block by block; g receives the gradient (nparams). */
static void gradient_check(sdi_energy_model *m, const sdi_corpus *c, double *g)
{
    for (int t = 0; t < m->nrows; t++) /* non-trivial β and larger w2: every term matters */
        m->beta[t] = 0.1 * (t % 5) - 0.2;
    for (long i = 0; i < (long)m->nrows * SDI_EM_NIN * m->hidden; i++)
        m->w2[i] *= 6.0;
    m->lambda[0] = 0.3;
    m->lambda[1] = 0.5;
    m->lambda[2] = 0.7;
    m->temperature = 0.5;
    memset(g, 0, sizeof(double) * (size_t)m->nparams);
    total_loss(m, c, g);
    long nh = (long)SDI_EM_NIN * m->hidden;
    struct { const char *name; long off, n; } blocks[4] = {
        {"w1", 0, nh}, {"b1", nh, nh}, {"w2", 2 * nh, (long)m->nrows * nh},
        {"beta", 2 * nh + (long)m->nrows * nh, m->nrows}};
    SDT_CHECK(blocks[3].off + blocks[3].n == m->nparams, "blocks cover all %ld parameters",
              m->nparams);
    for (int b = 0; b < 4; b++) {
        double worst = 0, gmax = 0;
        long at = -1;
        for (long i = blocks[b].off; i < blocks[b].off + blocks[b].n; i++) {
            double keep = m->theta[i], hstep = 1e-5 * (1.0 + fabs(keep));
            m->theta[i] = keep + hstep;
            double lp = total_loss(m, c, NULL);
            m->theta[i] = keep - hstep;
            double lm = total_loss(m, c, NULL);
            m->theta[i] = keep;
            double fd = (lp - lm) / (2 * hstep);
            double denom = fabs(fd) + fabs(g[i]);
            /* Relative error; below |grad| 1e-4 the floor makes it absolute (the
             * differences' rounding error, ~1e-16·|loss|/h, is not the gradient's). */
            double rel = fabs(fd - g[i]) / (denom > 1e-4 ? denom : 1e-4);
            if (rel > worst) {
                worst = rel;
                at = i;
            }
            gmax = fabs(g[i]) > gmax ? fabs(g[i]) : gmax;
        }
        printf("  %-4s %6ld params: max relative error %.3g (at %ld), max |grad| %.3g\n",
               blocks[b].name, blocks[b].n, worst, at, gmax);
        SDT_CHECK(worst < 1e-4, "%s: relative error %.3g at parameter %ld", blocks[b].name, worst,
                  at);
        SDT_CHECK(gmax > 1e-3, "%s: gradient is (nearly) zero everywhere", blocks[b].name);
    }
    /* The margin term alone: λ = 0 changes the loss (the check saw both terms). */
    double with = total_loss(m, c, NULL);
    double keep[3] = {m->lambda[0], m->lambda[1], m->lambda[2]};
    m->lambda[0] = m->lambda[1] = m->lambda[2] = 0;
    SDT_CHECK(total_loss(m, c, NULL) < with, "margin term adds to the loss");
    memcpy(m->lambda, keep, sizeof keep);
}

static void test_gradient_check(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 3, &c)); /* 9 tasks, all three operators */
    sdi_energy_model m;
    SDT_OK(sdi_energy_model_alloc(&m, 2));
    SDT_CHECK(!m.k_heads && m.nrows == m.ntotal, "one head per operator: a row per template");
    sdi_energy_fit_standardization(&m, &c);
    sdi_energy_model_init(&m, sdt_seed);
    double *g = calloc((size_t)m.nparams, sizeof *g);
    gradient_check(&m, &c, g);
    free(g);
    sdi_energy_model_free(&m);
    sdi_corpus_free(&c);
}

/* SpMM tasks' K over every bucket and between them (the synthetic corpus has 8, 32, 128). */
static const int spmm_ks[8] = {1, 8, 20, 32, 100, 256, 1000, 64};

static void set_spmm_ks(sdi_corpus *c)
{
    int i = 0;
    for (int t = 0; t < c->ntasks; t++)
        if (c->tasks[t].op == SD_OP_SPMM)
            c->tasks[t].k = spmm_ks[i++ % 8];
}

/* K heads: the gradient of every block (w2 and β now one block of rows per SpMM bucket)
 * against central differences, and every bucket's rows receive gradient from its tasks
 * only. */
static void test_k_heads_gradient(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 8, &c)); /* 8 spmm tasks: K over all buckets */
    set_spmm_ks(&c);
    sdi_energy_model m;
    SDT_OK(sdi_energy_model_alloc_layout(&m, 2, 1, 1));
    int nsp = m.ntemp[SD_OP_SPMM];
    SDT_CHECK(m.k_heads && m.nrows == m.ntotal + 3 * nsp, "rows %d = %d + 3·%d", m.nrows,
              m.ntotal, nsp);
    SDT_CHECK(m.row0[SD_OP_SPMV][3] == 0 && m.row0[SD_OP_SPMM][0] == m.ntemp[SD_OP_SPMV] &&
                  m.row0[SD_OP_SPMM][3] == m.ntemp[SD_OP_SPMV] + 3 * nsp &&
                  m.row0[SD_OP_SPGEMM][0] == m.ntemp[SD_OP_SPMV] + 4 * nsp &&
                  m.row0[SD_OP_SPGEMM][2] == m.row0[SD_OP_SPGEMM][0],
              "row layout: spmv, spmm per bucket, spgemm");
    sdi_energy_fit_standardization(&m, &c);
    sdi_energy_model_init(&m, sdt_seed);
    double *g = calloc((size_t)m.nparams, sizeof *g);
    gradient_check(&m, &c, g);
    /* Each bucket's β rows get gradient exactly when one of its tasks is measured. */
    const double *gbeta = g + 2 * (long)SDI_EM_NIN * m.hidden + (long)m.nrows * SDI_EM_NIN * m.hidden;
    for (int b = 0; b < SDI_EM_NKB; b++) {
        double sum = 0;
        for (int s2 = 0; s2 < nsp; s2++)
            sum += fabs(gbeta[m.row0[SD_OP_SPMM][b] + s2]);
        SDT_CHECK(sum > 1e-6, "bucket %d (K %d): no gradient reaches its head", b,
                  sdi_energy_k_bucket_value(b));
    }
    /* Only the tasks of bucket 3 (K 256, 1000): the other buckets' rows stay untouched. */
    for (int t = 0; t < c.ntasks; t++)
        if (c.tasks[t].op != SD_OP_SPMM || sdi_energy_k_bucket(c.tasks[t].k) != 3)
            for (int q = 0; q < SDI_RANK_MAX_TEMPLATES; q++)
                c.tasks[t].us[q] = 0;
    memset(g, 0, sizeof(double) * (size_t)m.nparams);
    total_loss(&m, &c, g);
    long nh = (long)SDI_EM_NIN * m.hidden;
    double other = 0, own = 0;
    for (int r = 0; r < m.nrows; r++) {
        int mine = r >= m.row0[SD_OP_SPMM][3] && r < m.row0[SD_OP_SPMM][3] + nsp;
        double a = fabs(g[2 * nh + (long)m.nrows * nh + r]);
        for (long i = 0; i < nh; i++)
            a += fabs(g[2 * nh + (long)r * nh + i]);
        *(mine ? &own : &other) += a;
    }
    SDT_CHECK(own > 1e-6 && other == 0, "bucket 3's tasks move its head only (own %g, other %g)",
              own, other);
    free(g);
    sdi_energy_model_free(&m);
    sdi_corpus_free(&c);
}

/* K → bucket: nearest of 8, 32, 128, 256 in log2 K, ties (16, 64) up; the head chosen from
 * the standardised input x agrees with it for every K. */
static void test_k_bucket_mapping(void)
{
    const int ks[] = {1, 8, 20, 32, 100, 256, 1000, 2, 15, 16, 63, 64, 181, 182, 1 << 20};
    const int want[] = {0, 0, 1, 1, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        SDT_CHECK(sdi_energy_k_bucket(ks[i]) == want[i], "K %d: bucket %d, expected %d", ks[i],
                  sdi_energy_k_bucket(ks[i]), want[i]);
    SDT_CHECK(sdi_energy_k_bucket_value(0) == 8 && sdi_energy_k_bucket_value(3) == 256 &&
                  sdi_energy_k_bucket_value(4) == 0,
              "bucket values");
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 16, &c));
    set_spmm_ks(&c); /* a log2 K standardisation with a non-trivial mean and spread */
    sdi_energy_model kh, one;
    SDT_OK(sdi_energy_model_alloc_layout(&kh, 2, 1, 1));
    SDT_OK(sdi_energy_model_alloc(&one, 2));
    sdi_energy_fit_standardization(&kh, &c);
    sdi_energy_fit_standardization(&one, &c);
    SDT_CHECK(kh.log2k_mean > 0.5 && kh.log2k_std > 0.5, "log2 K standardised (mean %g, std %g)",
              kh.log2k_mean, kh.log2k_std);
    double x[SDI_EM_NIN];
    int bad = 0;
    for (int k = 1; k <= 4096; k++) {
        sdi_energy_inputs(&kh, c.records[0].features, c.records[0].shape, SD_OP_SPMM, k, x);
        bad += sdi_energy_row0(&kh, SD_OP_SPMM, x) != kh.row0[SD_OP_SPMM][sdi_energy_k_bucket(k)];
        bad += sdi_energy_row0(&one, SD_OP_SPMM, x) != one.toff[SD_OP_SPMM];
    }
    SDT_CHECK(bad == 0, "%d of K = 1..4096 choose another head than their bucket", bad);
    for (int op = 0; op < SDI_EM_NOP; op += 2) {
        sdi_energy_inputs(&kh, c.records[0].features, c.records[0].shape, (sd_op)op, 1, x);
        SDT_CHECK(sdi_energy_row0(&kh, (sd_op)op, x) == kh.row0[op][0] &&
                      kh.row0[op][0] == one.toff[op] + (op == SD_OP_SPGEMM ? 3 * kh.ntemp[SD_OP_SPMM] : 0),
                  "op %d: one head", op);
    }
    sdi_energy_model_free(&kh);
    sdi_energy_model_free(&one);
    sdi_corpus_free(&c);
}

/* A trained K-heads model: contributions sum to energy − β of the chosen head; within a
 * bucket the feature contributions do not depend on K, across buckets they do (heads
 * differ), while the one-head model's never do; ranking agrees; file round trip. */
static void test_k_heads_model(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 40, &c));
    set_spmm_ks(&c);
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 5;
    o.hidden = 4;
    o.k_heads = 1;
    sdi_energy_model m, one;
    SDT_OK(sdi_energy_train(&c, &o, &m));
    o.k_heads = 0;
    SDT_OK(sdi_energy_train(&c, &o, &one));
    SDT_CHECK(m.k_heads == 1 && one.k_heads == 0 && m.nparams > one.nparams, "layouts");
    double x[SDI_EM_NIN], E[SDI_RANK_MAX_TEMPLATES], contrib[SDI_RANK_MAX_TEMPLATES * SDI_EM_NIN];
    double worst = 0;
    for (int t = 0; t < c.ntasks; t++) {
        const sdi_corpus_task *task = &c.tasks[t];
        const sdi_corpus_record *r = &c.records[task->record];
        sdi_energy_inputs(&m, r->features, r->shape, task->op, task->k, x);
        sdi_energy_eval(&m, x, task->op, E, contrib);
        int r0 = sdi_energy_row0(&m, task->op, x);
        for (int s2 = 0; s2 < m.ntemp[task->op]; s2++) {
            double sum = sdi_energy_prior(&m, r0 + s2);
            for (int j = 0; j < SDI_EM_NIN; j++)
                sum += contrib[s2 * SDI_EM_NIN + j];
            worst = fmax(worst, fabs(E[s2] - sum));
        }
    }
    SDT_CHECK(worst < 1e-12, "β + contributions = energy (off by %g)", worst);
    /* The feature contributions (inputs 0..43: all but log2_k) at K = 20 and 32 (bucket
     * 32), and at 8 and 256 (buckets 8 and 256). */
    const sdi_corpus_record *r = &c.records[0];
    int nsp = m.ntemp[SD_OP_SPMM];
    double cs[4][SDI_RANK_MAX_TEMPLATES * SDI_EM_NIN], c1[2][SDI_RANK_MAX_TEMPLATES * SDI_EM_NIN];
    const int kk[4] = {20, 32, 8, 256};
    for (int i = 0; i < 4; i++) {
        sdi_energy_inputs(&m, r->features, r->shape, SD_OP_SPMM, kk[i], x);
        sdi_energy_eval(&m, x, SD_OP_SPMM, E, cs[i]);
        if (i >= 2) {
            sdi_energy_inputs(&one, r->features, r->shape, SD_OP_SPMM, kk[i], x);
            sdi_energy_eval(&one, x, SD_OP_SPMM, E, c1[i - 2]);
        }
    }
    double same = 0, across = 0, one_across = 0;
    for (int s2 = 0; s2 < nsp; s2++)
        for (int j = 0; j < SDI_EM_NIN - 1; j++) {
            int q = s2 * SDI_EM_NIN + j;
            same = fmax(same, fabs(cs[0][q] - cs[1][q]));
            across = fmax(across, fabs(cs[2][q] - cs[3][q]));
            one_across = fmax(one_across, fabs(c1[0][q] - c1[1][q]));
        }
    SDT_CHECK(same == 0 && one_across == 0, "same head, same feature contributions (%g, %g)",
              same, one_across);
    SDT_CHECK(across > 1e-6, "the K = 8 and K = 256 heads differ (%g)", across);
    /* Ranking: the energies of the chosen head for any K >= 1, and the prior names it. */
    sd_features f;
    memset(&f, 0, sizeof f);
    memcpy(f.values, r->features, sizeof f.values);
    f.shape_class = r->shape;
    f.op = SD_OP_SPMM;
    const int rk_ks[3] = {1, 100, 5000};
    for (int i = 0; i < 3; i++) {
        sdi_ranking rk;
        SDT_OK(sdi_rank_energy(&m, &f, SD_OP_SPMM, rk_ks[i], &rk));
        sdi_energy_inputs(&m, f.values, f.shape_class, SD_OP_SPMM, rk_ks[i], x);
        sdi_energy_eval(&m, x, SD_OP_SPMM, E, NULL);
        double emin = E[0];
        for (int s2 = 1; s2 < nsp; s2++)
            emin = fmin(emin, E[s2]);
        SDT_CHECK(rk.n == nsp && rk.e[0].energy == emin, "K %d: ranking of the chosen head",
                  rk_ks[i]);
        for (int e = 0; e < rk.n; e++)
            for (int q = 0; q < rk.e[e].nreasons; q++)
                if (strcmp(rk.e[e].reasons[q].feature, "prior") == 0)
                    SDT_CHECK(strstr(rk.e[e].reasons[q].why, "K bucket") != NULL, "prior: '%s'",
                              rk.e[e].reasons[q].why);
    }
    /* File round trip: version 3 with the layout, bit-exact, same energies. */
    const char *path = tmp_path("kh.json");
    SDT_OK(sdi_energy_save(&m, path));
    char *text = NULL;
    size_t len = 0;
    SDT_OK(sdi_model_read_file(path, &text, &len));
    SDT_CHECK(strstr(text, "\"version\":3") != NULL &&
                  strstr(text, "\"spmm_k_heads\":[8,32,128,256]") != NULL,
              "version 3 file names its K heads");
    sdi_energy_model rd;
    SDT_OK(sdi_energy_load(path, &rd));
    SDT_CHECK(rd.k_heads == 1 && rd.nrows == m.nrows && rd.nparams == m.nparams &&
                  memcmp(rd.theta, m.theta, sizeof(double) * (size_t)m.nparams) == 0 &&
                  memcmp(rd.row0, m.row0, sizeof m.row0) == 0,
              "K-heads round trip bit-exact");
    double E2[SDI_RANK_MAX_TEMPLATES];
    sdi_energy_inputs(&m, r->features, r->shape, SD_OP_SPMM, 100, x);
    sdi_energy_eval(&m, x, SD_OP_SPMM, E, NULL);
    sdi_energy_eval(&rd, x, SD_OP_SPMM, E2, NULL);
    SDT_CHECK(memcmp(E, E2, sizeof(double) * (size_t)nsp) == 0, "same energies after loading");
    sdi_energy_model_free(&rd);
    /* Layout mismatches are parse errors that name the layout. */
    char *t = replace(text, "\"spmm_k_heads\":[8,32,128,256]", "\"spmm_k_heads\":[8,32,128,512]");
    expect_bad("other buckets", t, strlen(t), "\"spmm_k_heads\" is not [8, 32, 128, 256]");
    free(t);
    t = replace(text, "\"spmm_k_heads\":[8,32,128,256],", "");
    expect_bad("layout dropped", t, strlen(t), "no spmm_k_heads");
    free(t);
    t = replace(text, "\"version\":3", "\"version\":2");
    expect_bad("K heads in version 2", t, strlen(t), "\"spmm_k_heads\" in a format version 2");
    free(t);
    sdi_json j;
    sdi_json_init(&j, 0);
    SDT_OK(sdi_energy_to_json(&one, &j));
    SDT_OK(sdi_json_finish(&j));
    char *a = replace(j.buf, "\"version\":2", "\"version\":3");
    char *b = replace(a, "\"ensemble\":1,", "\"ensemble\":1,\"spmm_k_heads\":[8,32,128,256],");
    expect_bad("layout added", b, strlen(b), "members[0].w2\" has");
    expect_bad("layout added", b, strlen(b), "spmm_k_heads [8, 32, 128, 256]");
    free(a);
    free(b);
    sdi_json_free(&j);
    sdi_free(text);
    sdi_energy_model_free(&m);
    sdi_energy_model_free(&one);
    sdi_corpus_free(&c);
}

/* E of row r of member 0 straight from a weights file's JSON (the formula of energy.h,
 * computed independently of energy.c). */
static double reference_energy(const sdi_jvalue *member, int H, const double *x, int r)
{
    const sdi_jvalue *w1 = sdi_jget(member, "w1"), *b1 = sdi_jget(member, "b1");
    const sdi_jvalue *w2 = sdi_jget(member, "w2"), *beta = sdi_jget(member, "beta");
    double e = beta->items[r].number;
    for (int j = 0; j < SDI_EM_NIN; j++)
        for (int q = 0; q < H; q++)
            e += tanh(x[j] * w1->items[j * H + q].number + b1->items[j * H + q].number) *
                 w2->items[((long)r * SDI_EM_NIN + j) * H + q].number;
    return e;
}

/* Files without K heads — the committed weights (version 2) and one written now — load
 * as before: one head per operator, rows = global templates, energies as the formula
 * gives them from the file for every K, and they are still written as version 2. */
static void test_old_format_unchanged(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/../../models/energy-h200-2026-11-29.json", SD_TEST_DATA_DIR);
    sdi_energy_model m;
    SDT_OK(sdi_energy_load(path, &m));
    char *text = NULL;
    size_t len = 0;
    SDT_OK(sdi_model_read_file(path, &text, &len));
    sdi_jvalue v;
    SDT_OK(sdi_json_parse(text, (long)len, &v));
    SDT_CHECK(sdi_jget_number(&v, "version", 0) == 2 && sdi_jget(&v, "spmm_k_heads") == NULL,
              "the committed weights are version 2 without K heads");
    SDT_CHECK(m.k_heads == 0 && m.nrows == m.ntotal, "loaded with one head per operator");
    const sdi_jvalue *mem = sdi_jget(&v, "members");
    double x[SDI_EM_NIN], E[SDI_RANK_MAX_TEMPLATES], worst = 0;
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 4, &c));
    const int ks[4] = {1, 20, 100, 1000};
    for (int i = 0; i < 4; i++)
        for (int op = 0; op < SDI_EM_NOP; op++) {
            int k = op == SD_OP_SPMM ? ks[i] : 1;
            sdi_energy_inputs(&m, c.records[i].features, c.records[i].shape, (sd_op)op, k, x);
            sdi_energy_eval(&m, x, (sd_op)op, E, NULL);
            for (int s2 = 0; s2 < m.ntemp[op]; s2++)
                worst = fmax(worst, fabs(E[s2] - reference_energy(&mem->items[0], m.hidden, x,
                                                                  m.toff[op] + s2)));
        }
    SDT_CHECK(worst < 1e-9, "energies = the file's formula (off by %g)", worst);
    /* Written again: version 2, no layout key, and the same parameters. */
    const char *again = tmp_path("again.json");
    SDT_OK(sdi_energy_save(&m, again));
    char *t2 = NULL;
    size_t l2 = 0;
    SDT_OK(sdi_model_read_file(again, &t2, &l2));
    SDT_CHECK(strstr(t2, "\"version\":2") != NULL && strstr(t2, "spmm_k_heads") == NULL,
              "a model without K heads is written as version 2");
    sdi_energy_model r;
    SDT_OK(sdi_energy_load(again, &r));
    SDT_CHECK(r.nparams == m.nparams &&
                  memcmp(r.theta, m.theta, sizeof(double) * (size_t)m.nparams) == 0,
              "rewritten bit-exact");
    sdi_energy_model_free(&r);
    sdi_free(t2);
    sdi_corpus_free(&c);
    sdi_jvalue_free(&v);
    sdi_free(text);
    sdi_energy_model_free(&m);
}

/* Top-1 over the whole vocabulary against the synthetic rules. */
static double top1_vs_rules(const sdi_energy_model *m, const sdi_corpus *c, int *per_op_bad)
{
    int hits = 0;
    for (int t = 0; t < c->ntasks; t++) {
        const sdi_corpus_task *task = &c->tasks[t];
        const sdi_corpus_record *r = &c->records[task->record];
        sd_features f;
        memcpy(f.values, r->features, sizeof f.values);
        f.shape_class = r->shape;
        f.op = task->op;
        sdi_ranking rk;
        if (sdi_rank_energy(m, &f, task->op, task->k, &rk) != SD_OK)
            continue;
        int nv = 0;
        const char *const *v = sdi_vocabulary(task->op, &nv);
        int best = sdi_corpus_synthetic_best(r->features, task->op, task->k);
        if (strcmp(rk.e[0].label, v[best]) == 0)
            hits++;
        else if (per_op_bad != NULL)
            per_op_bad[task->op]++;
    }
    return c->ntasks > 0 ? (double)hits / c->ntasks : 0;
}

static void test_training_recovers_rules(void)
{
    sdi_corpus train, test;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 300, &train));
    SDT_OK(sdi_corpus_synthetic(sdt_seed + 1000, 200, &test));
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.seed = sdt_seed;
    o.epochs = 60;
    sdi_energy_model m;
    double t0 = sdi_now();
    SDT_OK(sdi_energy_train(&train, &o, &m));
    double secs = sdi_now() - t0;
    int bad[3] = {0, 0, 0};
    double top1 = top1_vs_rules(&m, &test, bad);
    sdi_energy_metrics em;
    sdi_energy_evaluate(&m, &test, &em);
    printf("  trained on %d tasks, %d epochs, %ld params in %.2f s; held-out top-1 %.3f "
           "(misses spmv %d, spmm %d, spgemm %d); measured-set top-1 %.3f, regret %.4f, "
           "capture %.3f, cliff %.3f, loss %.4f\n",
           train.ntasks, o.epochs, m.nparams, secs, top1, bad[0], bad[1], bad[2], em.top1,
           em.regret, em.capture, em.cliff, em.loss);
    SDT_CHECK(top1 >= 0.95, "held-out top-1 %.3f < 0.95", top1);
    SDT_CHECK(em.top1 >= 0.95 && em.regret < 1.06, "metrics top-1 %.3f regret %.4f", em.top1,
              em.regret);
    /* An untrained model is far from it: the test can fail. */
    sdi_energy_model u;
    SDT_OK(sdi_energy_model_alloc(&u, SDI_EM_HIDDEN));
    sdi_energy_fit_standardization(&u, &train);
    sdi_energy_model_init(&u, sdt_seed);
    double top1u = top1_vs_rules(&u, &test, NULL);
    SDT_CHECK(top1u < 0.7, "untrained top-1 %.3f", top1u);
    SDT_CHECK(sdi_energy_corpus_loss(&m, &test) < sdi_energy_corpus_loss(&u, &test),
              "training lowers held-out loss");
    sdi_energy_model_free(&u);
    sdi_energy_model_free(&m);
    sdi_corpus_free(&train);
    sdi_corpus_free(&test);
}

static void test_cross_validation(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 300, &c));
    for (int r = 0; r < c.nrecords; r++) /* two records per matrix: a group must not split */
        snprintf(c.records[r].matrix, sizeof c.records[r].matrix, "m%03d", r / 2);
    int fold[300], size[3] = {0, 0, 0};
    SDT_OK(sdi_corpus_folds(&c, 3, 7, fold));
    for (int r = 0; r < c.nrecords; r++) {
        SDT_CHECK(fold[r] >= 0 && fold[r] < 3, "fold %d", fold[r]);
        if (fold[r] >= 0 && fold[r] < 3)
            size[fold[r]]++;
        if (r % 2 == 1)
            SDT_CHECK(fold[r] == fold[r - 1], "matrix m%03d split across folds", r / 2);
    }
    SDT_CHECK(size[0] == 100 && size[1] == 100 && size[2] == 100, "fold sizes %d %d %d", size[0],
              size[1], size[2]);
    int again[300];
    SDT_OK(sdi_corpus_folds(&c, 3, 8, again));
    SDT_CHECK(memcmp(fold, again, sizeof fold) != 0, "the split seed matters");
    SDT_STATUS(sdi_corpus_folds(&c, 1, 7, fold), SD_ERR_INVALID_ARG);
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 40;
    sdi_energy_metrics mean, sd, runs[6];
    SDT_OK(sdi_energy_cross_validate(&c, &o, 3, 2, 7, &mean, &sd, runs));
    printf("  3-fold x 2 seeds held-out: top-1 %.3f (std %.3f), regret %.4f, capture %.3f\n",
           mean.top1, sd.top1, mean.regret, mean.capture);
    SDT_CHECK(mean.top1 >= 0.9, "CV top-1 %.3f", mean.top1);
    SDT_CHECK(runs[0].ntasks + runs[2].ntasks + runs[4].ntasks == c.ntasks,
              "every task held out once: %d %d %d", runs[0].ntasks, runs[2].ntasks, runs[4].ntasks);
    double m = (runs[0].top1 + runs[1].top1 + runs[2].top1 + runs[3].top1 + runs[4].top1 +
                runs[5].top1) / 6;
    SDT_CHECK(fabs(m - mean.top1) < 1e-12, "mean of the runs");
    sdi_corpus_free(&c);
}

static void test_determinism(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 40, &c));
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 5;
    o.seed = 77;
    sdi_energy_model a, b, d;
    SDT_OK(sdi_energy_train(&c, &o, &a));
    SDT_OK(sdi_energy_train(&c, &o, &b));
    o.seed = 78;
    SDT_OK(sdi_energy_train(&c, &o, &d));
    SDT_CHECK(a.nparams == b.nparams &&
                  memcmp(a.theta, b.theta, sizeof(double) * (size_t)a.nparams) == 0,
              "same seed, same weights");
    SDT_CHECK(memcmp(a.theta, d.theta, sizeof(double) * (size_t)a.nparams) != 0,
              "another seed, other weights");
    sdi_energy_model_free(&a);
    sdi_energy_model_free(&b);
    sdi_energy_model_free(&d);
    sdi_corpus_free(&c);
}

/* Allocation failures while training: an error, the model zeroed, no leak. */
static void test_train_alloc_failures(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 5, &c));
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 1;
    o.hidden = 2;
    long long live = sdi_alloc_live_bytes();
    int injected = 0;
    for (long n = 0; n < 1000; n++) {
        sdi_energy_model m;
        sdi_alloc_fail_after(n);
        sd_status s = sdi_energy_train(&c, &o, &m);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sdi_energy_model_free(&m);
            break;
        }
        injected++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY && m.theta == NULL, "failure %ld: %s", n,
                  sd_last_error());
        SDT_CHECK(sdi_alloc_live_bytes() == live, "leak after failure %ld", n);
    }
    SDT_CHECK(injected >= 6, "the sweep injected %d failures", injected);
    /* Bad options are usage errors. */
    sdi_energy_model m;
    o.temperature = 0;
    SDT_STATUS(sdi_energy_train(&c, &o, &m), SD_ERR_INVALID_ARG);
    o = sdi_energy_train_opts_default();
    o.hidden = 65;
    SDT_STATUS(sdi_energy_train(&c, &o, &m), SD_ERR_INVALID_ARG);
    sdi_corpus_free(&c);
}

static void test_weights_round_trip(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 30, &c));
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 3;
    o.seed = 0xFFFFFFFFFFFFFFF1ULL; /* above 2^53: the seed is kept as a string */
    sdi_energy_model m, r;
    SDT_OK(sdi_energy_train(&c, &o, &m));
    m.w1[0] = -0.0; /* the sign of zero survives too */
    const char *path = tmp_path("w.json");
    SDT_OK(sdi_energy_save(&m, path));
    SDT_OK(sdi_energy_load(path, &r));
    SDT_CHECK(r.hidden == m.hidden && r.nparams == m.nparams, "sizes");
    SDT_CHECK(memcmp(m.theta, r.theta, sizeof(double) * (size_t)m.nparams) == 0,
              "parameters bit-exact");
    SDT_CHECK(memcmp(m.mean, r.mean, sizeof m.mean) == 0 && memcmp(m.std, r.std, sizeof m.std) == 0 &&
                  m.log2k_mean == r.log2k_mean && m.log2k_std == r.log2k_std,
              "standardisation bit-exact");
    SDT_CHECK(signbit(r.w1[0]), "-0 kept");
    SDT_CHECK(r.seed == m.seed && r.epochs == 3 && r.temperature == m.temperature &&
                  memcmp(r.lambda, m.lambda, sizeof r.lambda) == 0,
              "training metadata");
    sdi_energy_model_free(&r);
    /* Allocation failures while loading: an error, never a leak. */
    long long live = sdi_alloc_live_bytes();
    int failures = 0;
    for (long n = 0;; n++) {
        sdi_alloc_fail_after(n);
        sd_status s = sdi_energy_load(path, &r);
        sdi_alloc_fail_after(-1);
        if (s == SD_OK) {
            sdi_energy_model_free(&r);
            break;
        }
        failures++;
        SDT_CHECK(s == SD_ERR_OUT_OF_MEMORY, "injected failure %ld: %s", n, sd_last_error());
        SDT_CHECK(sdi_alloc_live_bytes() == live, "leak after failure %ld", n);
        if (n > 100000)
            break;
    }
    SDT_CHECK(failures > 0, "the sweep injected failures");
    sdi_energy_model_free(&m);
    sdi_corpus_free(&c);
}

/* Loads text written to a file: expects SD_ERR_PARSE, a message containing want and
 * no leak. */
static void expect_bad(const char *label, const char *text, size_t len, const char *want)
{
    const char *path = tmp_path("bad.json");
    write_text(path, text, len);
    long long live = sdi_alloc_live_bytes();
    sdi_energy_model m;
    sd_status s = sdi_energy_load(path, &m);
    SDT_CHECK(s == SD_ERR_PARSE, "%s: status %s (%s)", label, sd_status_string(s), sd_last_error());
    SDT_CHECK(strstr(sd_last_error(), want) != NULL, "%s: message '%s' lacks '%s'", label,
              sd_last_error(), want);
    SDT_CHECK(m.theta == NULL, "%s: model zeroed", label);
    SDT_CHECK(sdi_alloc_live_bytes() == live, "%s: leak", label);
}

/* text with the first occurrence of from replaced by to (static buffer owner: caller frees). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    if (p == NULL)
        return NULL;
    size_t n = strlen(text) + strlen(to) + 1;
    char *out = malloc(n);
    size_t head = (size_t)(p - text);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, p + strlen(from));
    return out;
}

static void test_corrupt_weights(void)
{
    sdi_energy_model m;
    SDT_OK(sdi_energy_model_alloc(&m, 3));
    sdi_energy_model_init(&m, 5);
    sdi_json j;
    sdi_json_init(&j, 0);
    SDT_OK(sdi_energy_to_json(&m, &j));
    SDT_OK(sdi_json_finish(&j));
    const char *good = j.buf;
    size_t len = strlen(good);
    expect_bad("truncated", good, len / 2, "energy model");
    expect_bad("truncated", good, len / 2, "bad.json");
    expect_bad("empty", "", 0, "bad.json");
    char *t;
    t = replace(good, "\"row_cv\"", "\"row_cx\"");
    expect_bad("feature name", t, strlen(t), "inputs[6] is \"row_cx\"");
    free(t);
    t = replace(good, "\"rows\",\"cols\"", "\"cols\",\"rows\"");
    expect_bad("feature order", t, strlen(t), "inputs[0]");
    free(t);
    t = replace(good, "\"beta\":[", "\"beta\":[1,");
    expect_bad("beta size", t, strlen(t), "members[0].beta\" has 21 values, expected 20");
    free(t);
    t = replace(good, "\"hidden\":3", "\"hidden\":4");
    expect_bad("hidden vs w1", t, strlen(t), "members[0].w1\" has 135 values, expected 180");
    free(t);
    /* A NaN: JSON has none, so a writer would put null (or a bare NaN token). */
    const char *w1 = strstr(good, "\"w1\":[");
    if (w1 != NULL) {
        const char *v0 = w1 + 6, *comma = strchr(v0, ',');
        size_t head = (size_t)(v0 - good);
        char *n1 = malloc(len + 8);
        memcpy(n1, good, head);
        strcpy(n1 + head, "null");
        strcat(n1, comma);
        expect_bad("null weight", n1, strlen(n1), "members[0].w1[0] is not a finite number");
        memcpy(n1, good, head);
        strcpy(n1 + head, "NaN");
        strcat(n1, comma);
        expect_bad("NaN token", n1, strlen(n1), "bad.json");
        free(n1);
    }
    t = replace(good, "\"version\":2", "\"version\":4");
    expect_bad("version", t, strlen(t), "format version 4");
    free(t);
    t = replace(good, "\"bsr16\",\"tiles16\"", "\"tiles16\",\"bsr16\"");
    expect_bad("vocabulary", t, strlen(t), "vocabulary.spmv[7]");
    free(t);
    t = replace(good, "\"std\":[", "\"std\":[0,");
    expect_bad("std size", t, strlen(t), "standardization.std\" has 37 values");
    free(t);
    sdi_energy_model r;
    SDT_STATUS(sdi_energy_load(tmp_path("does-not-exist.json"), &r), SD_ERR_IO);
    sdi_json_free(&j);
    sdi_energy_model_free(&m);
}

/* A single-member model holding member i of e (own storage; free it). */
static void member_copy(const sdi_energy_model *e, int i, sdi_energy_model *one)
{
    SDT_OK(sdi_energy_model_alloc(one, e->hidden));
    memcpy(one->mean, e->mean, sizeof e->mean);
    memcpy(one->std, e->std, sizeof e->std);
    one->log2k_mean = e->log2k_mean;
    one->log2k_std = e->log2k_std;
    memcpy(one->theta, e->theta + (long)i * e->nparams, sizeof(double) * (size_t)e->nparams);
}

static void test_ensemble(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 30, &c));
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 4;
    o.hidden = 4;
    o.seed = 91;
    o.ensemble = 1;
    sdi_energy_model single, e;
    SDT_OK(sdi_energy_train(&c, &o, &single));
    o.ensemble = 3;
    SDT_OK(sdi_energy_train(&c, &o, &e));
    SDT_CHECK(e.members == 3 && e.nparams == single.nparams, "3 members of %ld parameters",
              single.nparams);
    SDT_CHECK(memcmp(e.theta, single.theta, sizeof(double) * (size_t)e.nparams) == 0,
              "member 0 is the model trained alone with the seed");
    SDT_CHECK(memcmp(e.theta, e.theta + e.nparams, sizeof(double) * (size_t)e.nparams) != 0 &&
                  memcmp(e.theta + e.nparams, e.theta + 2 * e.nparams,
                         sizeof(double) * (size_t)e.nparams) != 0,
              "members differ");
    sdi_energy_model mem[3];
    for (int i = 0; i < 3; i++)
        member_copy(&e, i, &mem[i]);
    double x[SDI_EM_NIN], E[SDI_RANK_MAX_TEMPLATES], Em[SDI_RANK_MAX_TEMPLATES];
    double contrib[SDI_RANK_MAX_TEMPLATES * SDI_EM_NIN], cm[SDI_RANK_MAX_TEMPLATES * SDI_EM_NIN];
    double worst_mean = 0, worst_sum = 0, worst_contrib = 0;
    for (int t = 0; t < c.ntasks; t++) {
        const sdi_corpus_task *task = &c.tasks[t];
        const sdi_corpus_record *r = &c.records[task->record];
        sdi_energy_inputs(&e, r->features, r->shape, task->op, task->k, x);
        sdi_energy_eval(&e, x, task->op, E, contrib);
        int nt = e.ntemp[task->op];
        double mean[SDI_RANK_MAX_TEMPLATES] = {0}, cmean[SDI_RANK_MAX_TEMPLATES * SDI_EM_NIN] = {0};
        for (int i = 0; i < 3; i++) {
            sdi_energy_eval(&mem[i], x, task->op, Em, cm);
            for (int s2 = 0; s2 < nt; s2++)
                mean[s2] += Em[s2] / 3;
            for (int q = 0; q < nt * SDI_EM_NIN; q++)
                cmean[q] += cm[q] / 3;
        }
        for (int s2 = 0; s2 < nt; s2++) {
            double sum = sdi_energy_prior(&e, sdi_energy_row0(&e, task->op, x) + s2);
            for (int j = 0; j < SDI_EM_NIN; j++)
                sum += contrib[s2 * SDI_EM_NIN + j];
            worst_mean = fmax(worst_mean, fabs(E[s2] - mean[s2]));
            worst_sum = fmax(worst_sum, fabs(E[s2] - sum));
        }
        for (int q = 0; q < nt * SDI_EM_NIN; q++)
            worst_contrib = fmax(worst_contrib, fabs(contrib[q] - cmean[q]));
    }
    SDT_CHECK(worst_mean < 1e-12, "ensemble energy = mean of the members (off by %g)", worst_mean);
    SDT_CHECK(worst_contrib < 1e-12, "contributions = mean of the members' (off by %g)",
              worst_contrib);
    SDT_CHECK(worst_sum < 1e-12, "prior + contributions = energy (off by %g)", worst_sum);
    /* The gradient is one member's: asking it of an ensemble is refused (NaN, grad kept). */
    double *g = calloc((size_t)e.nparams, sizeof *g);
    const sdi_corpus_task *t0 = &c.tasks[0];
    sdi_energy_inputs(&e, c.records[t0->record].features, c.records[t0->record].shape, t0->op,
                      t0->k, x);
    SDT_CHECK(isnan(sdi_energy_task_loss(&e, x, t0->op, t0->us, t0->baseline_us, 0.1, 0.25, 1, g)),
              "ensemble gradient refused");
    SDT_CHECK(g[0] == 0 && isfinite(sdi_energy_task_loss(&e, x, t0->op, t0->us, t0->baseline_us,
                                                         0.1, 0.25, 1, NULL)),
              "loss without gradient works");
    free(g);
    /* Ranking explains the ensemble like one model: reasons sum to the energy. */
    sd_features f;
    memset(&f, 0, sizeof f);
    memcpy(f.values, c.records[0].features, sizeof f.values);
    f.shape_class = c.records[0].shape;
    sdi_ranking rk;
    SDT_OK(sdi_rank_energy(&e, &f, SD_OP_SPMM, 32, &rk));
    SDT_CHECK(rk.n == e.ntemp[SD_OP_SPMM] && strcmp(rk.model, "energy-v1") == 0, "ranking");
    /* File round trip of the ensemble, bit-exact. */
    const char *path = tmp_path("ens.json");
    sdi_energy_model r;
    SDT_OK(sdi_energy_save(&e, path));
    SDT_OK(sdi_energy_load(path, &r));
    SDT_CHECK(r.members == 3 && r.nparams == e.nparams &&
                  memcmp(r.theta, e.theta, sizeof(double) * (size_t)(3 * e.nparams)) == 0,
              "ensemble round trip bit-exact");
    SDT_CHECK(r.epochs == 4 && r.batch == o.batch && r.lr == o.lr &&
                  r.weight_decay == o.weight_decay && r.cosine == o.cosine,
              "training metadata");
    sdi_energy_model_free(&r);
    /* Bad member counts and members are parse errors. */
    sdi_json j;
    sdi_json_init(&j, 0);
    SDT_OK(sdi_energy_to_json(&e, &j));
    SDT_OK(sdi_json_finish(&j));
    char *t = replace(j.buf, "\"ensemble\":3", "\"ensemble\":2");
    expect_bad("count below members", t, strlen(t), "\"members\" has 3 entries, \"ensemble\" says 2");
    free(t);
    t = replace(j.buf, "\"ensemble\":3", "\"ensemble\":4");
    expect_bad("count above members", t, strlen(t), "\"members\" has 3 entries, \"ensemble\" says 4");
    free(t);
    t = replace(j.buf, "\"ensemble\":3", "\"ensemble\":0");
    expect_bad("count 0", t, strlen(t), "\"ensemble\" missing or not an integer in 1..16");
    free(t);
    t = replace(j.buf, "\"ensemble\":3", "\"ensemble\":1.5");
    expect_bad("count 1.5", t, strlen(t), "\"ensemble\" missing or not an integer");
    free(t);
    t = replace(j.buf, "\"ensemble\":3,", "");
    expect_bad("count missing", t, strlen(t), "\"ensemble\" missing");
    free(t);
    t = replace(j.buf, "\"members\":[{", "\"members\":[7,{");
    char *t2 = replace(t, "\"ensemble\":3", "\"ensemble\":4");
    expect_bad("member not an object", t2, strlen(t2), "members[0] is not an object");
    free(t);
    free(t2);
    t = replace(j.buf, "\"members\":[", "\"membres\":[");
    expect_bad("members missing", t, strlen(t), "\"members\" missing or not an array");
    free(t);
    sdi_json_free(&j);
    for (int i = 0; i < 3; i++)
        sdi_energy_model_free(&mem[i]);
    sdi_energy_model_free(&e);
    sdi_energy_model_free(&single);
    sdi_corpus_free(&c);
}

/* A version 1 file (one model, parameters at the top level, no "ensemble") still loads,
 * bit-exactly, as a one-member model. */
static void test_version1_file(void)
{
    sdi_energy_model m, r;
    SDT_OK(sdi_energy_model_alloc(&m, 3));
    sdi_energy_model_init(&m, 12);
    sdi_json j;
    sdi_json_init(&j, 0);
    SDT_OK(sdi_energy_to_json(&m, &j));
    SDT_OK(sdi_json_finish(&j));
    /* The version 1 layout from the version 2 text: same keys, minus the member list. */
    char *a = replace(j.buf, "\"version\":2", "\"version\":1");
    char *b = replace(a, "\"ensemble\":1,", "");
    char *c = replace(b, "\"members\":[{", "");
    SDT_CHECK(c != NULL && strcmp(c + strlen(c) - 3, "}]}") == 0, "v2 text ends with the member list");
    if (c != NULL)
        strcpy(c + strlen(c) - 3, "}");
    const char *path = tmp_path("v1.json");
    write_text(path, c, strlen(c));
    SDT_CHECK(strstr(c, "members") == NULL && strstr(c, "\"w1\":[") != NULL, "v1 layout");
    SDT_OK(sdi_energy_load(path, &r));
    SDT_CHECK(r.members == 1 && r.nparams == m.nparams &&
                  memcmp(r.theta, m.theta, sizeof(double) * (size_t)m.nparams) == 0,
              "version 1 parameters bit-exact");
    sdi_energy_model_free(&r);
    /* Version 1 with a member list is not version 1: its top-level w1 is missing. */
    char *d = replace(j.buf, "\"version\":2", "\"version\":1");
    expect_bad("v1 with members", d, strlen(d), "\"w1\" missing or not an array");
    free(a);
    free(b);
    free(c);
    free(d);
    sdi_json_free(&j);
    sdi_energy_model_free(&m);
}

static void test_corpus_io(void)
{
    sdi_corpus c, r;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 25, &c));
    SDT_CHECK(c.ntasks == 75 && c.nrecords == 25, "sizes");
    const char *path = tmp_path("corpus.jsonl");
    SDT_OK(sdi_corpus_write(&c, path));
    SDT_OK(sdi_corpus_read(path, &r));
    SDT_CHECK(r.nrecords == c.nrecords && r.ntasks == c.ntasks, "counts %d %d", r.nrecords,
              r.ntasks);
    int same = r.nrecords == c.nrecords && r.ntasks == c.ntasks;
    for (int i = 0; same && i < c.nrecords; i++)
        same = memcmp(c.records[i].features, r.records[i].features, sizeof c.records[i].features) == 0 &&
               c.records[i].shape == r.records[i].shape &&
               strcmp(c.records[i].matrix, r.records[i].matrix) == 0;
    for (int i = 0; same && i < c.ntasks; i++)
        same = memcmp(&c.tasks[i], &r.tasks[i], sizeof c.tasks[i]) == 0;
    SDT_CHECK(same, "records and tasks equal after the round trip");
    sdi_corpus_free(&r);
    sdi_corpus_free(&c);

    /* Malformed lines name the line. */
    char *text = NULL;
    size_t len = 0;
    SDT_OK(sdi_model_read_file(path, &text, &len));
    char *first_nl = strchr(text, '\n');
    char *second = first_nl + 1;
    struct { const char *from, *to, *want; } cases[] = {
        {"\"row_cv\":", "\"row_cz\":", "line 2: feature \"row_cv\" missing"},
        {"\"op\":\"spmv\"", "\"op\":\"spmx\"", "line 2: task 0: \"op\""},
        {"\"shape_class\":\"", "\"shape_class\":\"x", "line 2: \"shape_class\""},
        {"\"csr\":", "\"csx\":", "\"csx\" is not a sp"},
        {"\"baseline_us\":", "\"baseline_us\":-", "line 2: task 0: \"baseline_us\""},
        {"{\"matrix\"", "[{\"matrix\"", "line 2"},
    };
    for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
        char *mod = replace(second, cases[q].from, cases[q].to);
        SDT_CHECK(mod != NULL, "case %zu applies", q);
        if (mod == NULL)
            continue;
        size_t hl = (size_t)(second - text);
        char *all = malloc(hl + strlen(mod) + 1);
        memcpy(all, text, hl);
        strcpy(all + hl, mod);
        long long live = sdi_alloc_live_bytes();
        sd_status s = sdi_corpus_parse(all, strlen(all), &r);
        SDT_CHECK(s == SD_ERR_PARSE, "case %zu: %s", q, sd_status_string(s));
        SDT_CHECK(strstr(sd_last_error(), cases[q].want) != NULL, "case %zu: '%s' lacks '%s'", q,
                  sd_last_error(), cases[q].want);
        SDT_CHECK(sdi_alloc_live_bytes() == live && r.records == NULL, "case %zu: leak", q);
        free(all);
        free(mod);
    }
    /* Blank lines (with spaces or CR) are skipped; line numbers still count them. */
    char *padded = malloc(len + 8);
    strcpy(padded, "\n \r\n");
    strcat(padded, text);
    SDT_OK(sdi_corpus_parse(padded, strlen(padded), &r));
    SDT_CHECK(r.nrecords == 25 && r.ntasks == 75, "blank lines skipped: %d records", r.nrecords);
    sdi_corpus_free(&r);
    free(padded);
    sdi_free(text);
}

static void test_rank_energy(void)
{
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 60, &c));
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 10;
    sdi_energy_model m;
    SDT_OK(sdi_energy_train(&c, &o, &m));
    for (int op = 0; op < 3; op++) {
        sd_features f;
        memcpy(f.values, c.records[0].features, sizeof f.values);
        f.shape_class = c.records[0].shape;
        f.op = (sd_op)op;
        sdi_ranking rk;
        SDT_OK(sdi_rank_energy(&m, &f, (sd_op)op, 64, &rk));
        int nv = 0;
        sdi_vocabulary((sd_op)op, &nv);
        SDT_CHECK(rk.n == nv && strcmp(rk.model, "energy-v1") == 0, "op %d: %d entries", op, rk.n);
        double x[SDI_EM_NIN], E[SDI_RANK_MAX_TEMPLATES];
        sdi_energy_inputs(&m, f.values, f.shape_class, (sd_op)op, 64, x);
        sdi_energy_eval(&m, x, (sd_op)op, E, NULL);
        for (int i = 0; i < rk.n; i++) {
            if (i > 0)
                SDT_CHECK(rk.e[i - 1].energy <= rk.e[i].energy, "sorted");
            SDT_CHECK(rk.e[i].nreasons == SDI_RANK_MAX_REASONS, "reasons");
            for (int q = 1; q < rk.e[i].nreasons; q++)
                SDT_CHECK(fabs(rk.e[i].reasons[q - 1].contribution) >=
                              fabs(rk.e[i].reasons[q].contribution),
                          "reasons by magnitude");
            double emin = E[0];
            for (int s = 1; s < nv; s++)
                emin = E[s] < emin ? E[s] : emin;
            if (i == 0)
                SDT_CHECK(rk.e[0].energy == emin, "first is the lowest energy");
        }
    }
    sd_features f;
    memset(&f, 0, sizeof f);
    sdi_ranking rk;
    SDT_STATUS(sdi_rank_energy(&m, &f, SD_OP_SPMM, 0, &rk), SD_ERR_INVALID_ARG);
    SDT_STATUS(sdi_rank_energy(NULL, &f, SD_OP_SPMV, 1, &rk), SD_ERR_INVALID_ARG);
    sdi_energy_model_free(&m);
    sdi_corpus_free(&c);
}

int main(void)
{
    sdt_init("test_energy");
    snprintf(tmpdir_path, sizeof tmpdir_path, "/tmp/sd-test-energy-XXXXXX");
    if (mkdtemp(tmpdir_path) == NULL)
        return 1;
    SDT_RUN(test_gradient_check);
    SDT_RUN(test_k_heads_gradient);
    SDT_RUN(test_k_bucket_mapping);
    SDT_RUN(test_k_heads_model);
    SDT_RUN(test_old_format_unchanged);
    SDT_RUN(test_corpus_io);
    SDT_RUN(test_train_alloc_failures);
    SDT_RUN(test_weights_round_trip);
    SDT_RUN(test_corrupt_weights);
    SDT_RUN(test_ensemble);
    SDT_RUN(test_version1_file);
    SDT_RUN(test_determinism);
    SDT_RUN(test_cross_validation);
    SDT_RUN(test_rank_energy);
    SDT_RUN(test_training_recovers_rules);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir_path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir_path);
    return sdt_finish();
}
