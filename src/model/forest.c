/* src/model/forest.c: random forests of CART trees (forest.h), their JSON form, and
 * ParamSpMM's decider: its matrix features and four parameter classifiers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "model_files.h"
#include "../core/rng.h"
#include "forest.h"

sdi_forest_opts sdi_forest_opts_default(void)
{
    sdi_forest_opts o;
    memset(&o, 0, sizeof o);
    o.ntrees = 64;
    o.max_depth = 16;
    o.min_leaf = 1;
    o.bootstrap = 1;
    o.seed = 1;
    return o;
}


void sdi_forest_free(sdi_forest *f)
{
    if (f == NULL)
        return;
    for (int t = 0; t < f->ntrees && f->trees != NULL; t++)
        sdi_free(f->trees[t].nodes);
    sdi_free(f->trees);
    memset(f, 0, sizeof *f);
}

/* ------------------------------------------------------------------ tree building */
typedef struct {
    double x, y;
} pair_xy;

static int cmp_pair(const void *a, const void *b)
{
    double u = ((const pair_xy *)a)->x, v = ((const pair_xy *)b)->x;
    return u < v ? -1 : u > v ? 1 : 0;
}

typedef struct {
    const double *X, *y;
    int p, nclass;
    sdi_forest_opts o;
    int mtry;
    sdi_rng rng;
    pair_xy *pairs;   /* scratch, n */
    int *feat_perm;   /* scratch, p */
    sdi_tree *tree;
    int cap;
} builder;

static int new_node(builder *b)
{
    if (b->tree->nnodes == b->cap) {
        int nc = b->cap > 0 ? b->cap * 2 : 64;
        sdi_tree_node *p = sdi_realloc_array(b->tree->nodes, (size_t)nc, sizeof *p);
        if (p == NULL)
            return -1;
        b->tree->nodes = p;
        b->cap = nc;
    }
    int i = b->tree->nnodes++;
    b->tree->nodes[i] = (sdi_tree_node){-1, 0.0, -1, -1, 0.0};
    return i;
}

/* Impurity × count: SSE (regression) or Gini·m (classification). */
static double leaf_value(const builder *b, const int *idx, int m, double *impurity)
{
    if (b->nclass == 0) {
        double s = 0, ss = 0;
        for (int i = 0; i < m; i++) {
            double v = b->y[idx[i]];
            s += v;
            ss += v * v;
        }
        *impurity = ss - s * s / m;
        return s / m;
    }
    int cnt[SDI_FOREST_MAX_CLASSES] = {0};
    for (int i = 0; i < m; i++)
        cnt[(int)b->y[idx[i]]]++;
    int best = 0;
    double g = 0;
    for (int c = 0; c < b->nclass; c++) {
        if (cnt[c] > cnt[best])
            best = c;
        g += (double)cnt[c] * cnt[c];
    }
    *impurity = m - g / m;
    return best;
}

static sd_status build(builder *b, int *idx, int m, int depth, int *out_node)
{
    int node = new_node(b);
    if (node < 0)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory growing a tree");
    *out_node = node;
    double imp;
    double value = leaf_value(b, idx, m, &imp);
    b->tree->nodes[node].value = value;
    if (depth >= b->o.max_depth || m < 2 * b->o.min_leaf || imp <= 1e-12)
        return SD_OK;
    /* Random subset of mtry features: a partial Fisher–Yates shuffle. */
    for (int i = 0; i < b->p; i++)
        b->feat_perm[i] = i;
    int best_f = -1;
    double best_thr = 0, best_score = imp - 1e-12 * (1 + fabs(imp));
    for (int q = 0; q < b->mtry; q++) {
        int r = q + (int)sdi_rng_below(&b->rng, (uint64_t)(b->p - q));
        int f = b->feat_perm[r];
        b->feat_perm[r] = b->feat_perm[q];
        b->feat_perm[q] = f;
        for (int i = 0; i < m; i++)
            b->pairs[i] = (pair_xy){b->X[(size_t)idx[i] * b->p + f], b->y[idx[i]]};
        qsort(b->pairs, (size_t)m, sizeof *b->pairs, cmp_pair);
        if (b->pairs[0].x == b->pairs[m - 1].x)
            continue;
        /* Scan the split positions between distinct values. */
        double sl = 0, ssl = 0, st = 0, sst = 0;
        int cl[SDI_FOREST_MAX_CLASSES] = {0}, ct[SDI_FOREST_MAX_CLASSES] = {0};
        for (int i = 0; i < m; i++) {
            if (b->nclass == 0) {
                st += b->pairs[i].y;
                sst += b->pairs[i].y * b->pairs[i].y;
            } else {
                ct[(int)b->pairs[i].y]++;
            }
        }
        double gl = 0, gt = 0; /* Σ count² left, total */
        for (int c = 0; c < b->nclass; c++)
            gt += (double)ct[c] * ct[c];
        double gr = gt;
        for (int i = 0; i < m - 1; i++) {
            double yv = b->pairs[i].y;
            if (b->nclass == 0) {
                sl += yv;
                ssl += yv * yv;
            } else {
                int c = (int)yv;
                gl += 2.0 * cl[c] + 1; /* (n+1)² − n² */
                gr -= 2.0 * (ct[c] - cl[c]) - 1;
                cl[c]++;
            }
            int nl = i + 1, nr = m - nl;
            if (b->pairs[i].x == b->pairs[i + 1].x || nl < b->o.min_leaf || nr < b->o.min_leaf)
                continue;
            double score;
            if (b->nclass == 0) {
                double sr = st - sl, ssr = sst - ssl;
                score = (ssl - sl * sl / nl) + (ssr - sr * sr / nr);
            } else {
                score = (nl - gl / nl) + (nr - gr / nr);
            }
            if (score < best_score) {
                best_score = score;
                best_f = f;
                best_thr = 0.5 * (b->pairs[i].x + b->pairs[i + 1].x);
                if (!(best_thr < b->pairs[i + 1].x)) /* adjacent doubles: keep left exact */
                    best_thr = b->pairs[i].x;
            }
        }
    }
    if (best_f < 0)
        return SD_OK;
    int nl = 0;
    for (int i = 0; i < m; i++)
        if (b->X[(size_t)idx[i] * b->p + best_f] <= best_thr) {
            int t = idx[i];
            idx[i] = idx[nl];
            idx[nl++] = t;
        }
    int l = -1, r = -1;
    sd_status s = build(b, idx, nl, depth + 1, &l);
    if (s == SD_OK)
        s = build(b, idx + nl, m - nl, depth + 1, &r);
    if (s != SD_OK)
        return s;
    sdi_tree_node *nd = &b->tree->nodes[node]; /* nodes may have moved */
    nd->feature = best_f;
    nd->threshold = best_thr;
    nd->left = l;
    nd->right = r;
    return SD_OK;
}

sd_status sdi_forest_fit(const double *X, const double *y, int n, int p, int nclass,
                         const sdi_forest_opts *opts, sdi_forest *out)
{
    int *idx = NULL;
    pair_xy *pairs = NULL;
    int *perm = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(idx);                                                                     \
        sdi_free(pairs);                                                                   \
        sdi_free(perm);                                                                    \
        sdi_forest_free(out);                                                              \
    } while (0)
    memset(out, 0, sizeof *out);
    sdi_forest_opts o = opts != NULL ? *opts : sdi_forest_opts_default();
    if (n < 1 || p < 1 || nclass < 0 || nclass == 1 || nclass > SDI_FOREST_MAX_CLASSES ||
        o.ntrees < 1 || o.max_depth < 0 || o.max_depth > 64 || o.min_leaf < 1 || o.mtry < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "forest: n %d, p %d, classes %d, trees %d, depth %d, "
                       "min_leaf %d, mtry %d out of range", n, p, nclass, o.ntrees, o.max_depth,
                       o.min_leaf, o.mtry);
    for (long i = 0; i < (long)n * p; i++)
        if (!isfinite(X[i]))
            return SDI_ERR(SD_ERR_INVALID_ARG, "forest: X[%ld][%ld] is not finite", i / p, i % p);
    for (int i = 0; i < n; i++)
        if (!isfinite(y[i]) || (nclass > 0 && (y[i] < 0 || y[i] >= nclass || y[i] != floor(y[i]))))
            return SDI_ERR(SD_ERR_INVALID_ARG, "forest: target %d (%g) is not %s", i, y[i],
                           nclass > 0 ? "a class index" : "finite");
    builder b;
    memset(&b, 0, sizeof b);
    b.X = X;
    b.y = y;
    b.p = p;
    b.nclass = nclass;
    b.o = o;
    b.mtry = o.mtry > 0 ? (o.mtry < p ? o.mtry : p)
                        : nclass == 0 ? (p + 2) / 3 : (int)ceil(sqrt((double)p));
    sdi_rng_seed(&b.rng, o.seed, 0xf0e57 /* stream: forest */, 0);
    idx = sdi_malloc_array((size_t)n, sizeof *idx);
    SD_CHECK_ALLOC(idx, "forest sample indices");
    pairs = sdi_malloc_array((size_t)n, sizeof *pairs);
    SD_CHECK_ALLOC(pairs, "forest scratch");
    perm = sdi_malloc_array((size_t)p, sizeof *perm);
    SD_CHECK_ALLOC(perm, "forest scratch");
    b.pairs = pairs;
    b.feat_perm = perm;
    out->trees = sdi_calloc((size_t)o.ntrees, sizeof *out->trees);
    SD_CHECK_ALLOC(out->trees, "forest trees");
    out->ntrees = o.ntrees;
    out->nfeat = p;
    out->nclass = nclass;
    for (int t = 0; t < o.ntrees; t++) {
        for (int i = 0; i < n; i++)
            idx[i] = o.bootstrap ? (int)sdi_rng_below(&b.rng, (uint64_t)n) : i;
        b.tree = &out->trees[t];
        b.cap = 0;
        int root;
        SD_TRY(build(&b, idx, n, 0, &root));
    }
    sdi_free(idx);
    sdi_free(pairs);
    sdi_free(perm);
    return SD_OK;
#undef SD_FREE_ALL
}

static double tree_predict(const sdi_tree *t, const double *x)
{
    int i = 0;
    while (t->nodes[i].feature >= 0)
        i = x[t->nodes[i].feature] <= t->nodes[i].threshold ? t->nodes[i].left : t->nodes[i].right;
    return t->nodes[i].value;
}

double sdi_forest_predict(const sdi_forest *f, const double *x)
{
    if (f->nclass == 0) {
        double s = 0;
        for (int t = 0; t < f->ntrees; t++)
            s += tree_predict(&f->trees[t], x);
        return s / f->ntrees;
    }
    int votes[SDI_FOREST_MAX_CLASSES] = {0};
    for (int t = 0; t < f->ntrees; t++)
        votes[(int)tree_predict(&f->trees[t], x)]++;
    int best = 0;
    for (int c = 1; c < f->nclass; c++)
        if (votes[c] > votes[best])
            best = c;
    return best;
}

/* ------------------------------------------------------------------ JSON */
static void num(sdi_json *j, double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.17g", v);
    sdi_json_raw(j, b);
}

void sdi_forest_json(const sdi_forest *f, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "nfeat");
    sdi_json_int(j, f->nfeat);
    sdi_json_key(j, "nclass");
    sdi_json_int(j, f->nclass);
    sdi_json_key(j, "trees");
    sdi_json_begin_array(j);
    for (int t = 0; t < f->ntrees; t++) {
        const sdi_tree *tr = &f->trees[t];
        sdi_json_begin_object(j);
        static const char *const keys[5] = {"feature", "threshold", "left", "right", "value"};
        for (int k = 0; k < 5; k++) {
            sdi_json_key(j, keys[k]);
            sdi_json_begin_array(j);
            for (int i = 0; i < tr->nnodes; i++) {
                const sdi_tree_node *nd = &tr->nodes[i];
                if (k == 0)
                    sdi_json_int(j, nd->feature);
                else if (k == 1)
                    num(j, nd->threshold);
                else if (k == 2)
                    sdi_json_int(j, nd->left);
                else if (k == 3)
                    sdi_json_int(j, nd->right);
                else
                    num(j, nd->value);
            }
            sdi_json_end_array(j);
        }
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
}

static const sdi_jvalue *array_of(const sdi_jvalue *o, const char *key, int n)
{
    const sdi_jvalue *a = sdi_jget(o, key);
    if (a == NULL || a->type != SDI_JARRAY || (n >= 0 && a->n != n))
        return NULL;
    for (int i = 0; i < a->n; i++)
        if (a->items[i].type != SDI_JNUMBER || !isfinite(a->items[i].number))
            return NULL;
    return a;
}

sd_status sdi_forest_from_json(const sdi_jvalue *v, sdi_forest *out)
{
#define SD_FREE_ALL sdi_forest_free(out)
    memset(out, 0, sizeof *out);
    double nf = sdi_jget_number(v, "nfeat", -1), nc = sdi_jget_number(v, "nclass", -1);
    const sdi_jvalue *trees = sdi_jget(v, "trees");
    if (!(nf >= 1 && nf <= 1e6 && nf == floor(nf)) ||
        !(nc == 0 || (nc >= 2 && nc <= SDI_FOREST_MAX_CLASSES && nc == floor(nc))))
        return SDI_ERR(SD_ERR_PARSE, "forest: \"nfeat\" or \"nclass\" missing or out of range");
    if (trees == NULL || trees->type != SDI_JARRAY || trees->n < 1)
        return SDI_ERR(SD_ERR_PARSE, "forest: \"trees\" missing or empty");
    out->trees = sdi_calloc((size_t)trees->n, sizeof *out->trees);
    SD_CHECK_ALLOC(out->trees, "forest trees");
    out->ntrees = trees->n;
    out->nfeat = (int)nf;
    out->nclass = (int)nc;
    for (int t = 0; t < trees->n; t++) {
        const sdi_jvalue *tv = &trees->items[t];
        const sdi_jvalue *fe = array_of(tv, "feature", -1);
        int n = fe != NULL ? fe->n : 0;
        const sdi_jvalue *th = array_of(tv, "threshold", n), *le = array_of(tv, "left", n),
                         *ri = array_of(tv, "right", n), *va = array_of(tv, "value", n);
        if (fe == NULL || n < 1 || th == NULL || le == NULL || ri == NULL || va == NULL) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_PARSE, "forest: tree %d: feature/threshold/left/right/value "
                           "missing, of unequal lengths or not finite numbers", t);
        }
        sdi_tree *tr = &out->trees[t];
        tr->nodes = sdi_malloc_array((size_t)n, sizeof *tr->nodes);
        SD_CHECK_ALLOC(tr->nodes, "forest nodes");
        tr->nnodes = n;
        for (int i = 0; i < n; i++) {
            sdi_tree_node *nd = &tr->nodes[i];
            nd->feature = (int)fe->items[i].number;
            nd->threshold = th->items[i].number;
            nd->left = (int)le->items[i].number;
            nd->right = (int)ri->items[i].number;
            nd->value = va->items[i].number;
            int bad;
            if (nd->feature < 0) /* a leaf: a class index for classifiers */
                bad = nd->feature != -1 || nd->left != -1 || nd->right != -1 ||
                      (nc > 0 && (nd->value < 0 || nd->value >= nc || nd->value != floor(nd->value)));
            else /* children after their parent: no cycles */
                bad = nd->feature >= out->nfeat || nd->left <= i || nd->left >= n ||
                      nd->right <= i || nd->right >= n;
            if (bad) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_PARSE, "forest: tree %d node %d: invalid feature, children "
                               "or leaf value", t, i);
            }
        }
    }
    return SD_OK;
#undef SD_FREE_ALL
}

/* ------------------------------------------------------------------ ParamSpMM */
static const int values_w[] = {1, 2, 4, 8}, values_f[] = {1, 2, 4}, values_v[] = {1, 2},
                 values_s[] = {0, 1};
static const char *const param_names[4] = {"W", "F", "V", "S"};
static const char *const pspmm_names[SDI_PSPMM_NFEAT] = {
    "n", "n_hat", "nnz", "delta", "d", "d_hat", "d_max", "cv", "cv_hat", "sr_1", "sr_2", "sr_3",
    "sr_4", "rho", "b", "b_max", "pr_1", "pr_2"};

const int *sdi_paramspmm_values(int param, int *n)
{
    switch (param) {
    case 0: *n = 4; return values_w;
    case 1: *n = 3; return values_f;
    case 2: *n = 2; return values_v;
    case 3: *n = 2; return values_s;
    }
    *n = 0;
    return NULL;
}

const char *sdi_paramspmm_feature_name(int i)
{
    return i >= 0 && i < SDI_PSPMM_NFEAT ? pspmm_names[i] : NULL;
}

sd_status sdi_paramspmm_features(const sd_csr *a, double out[SDI_PSPMM_NFEAT])
{
    memset(out, 0, sizeof(double) * SDI_PSPMM_NFEAT);
    sd_status s = sdi_csr_check_structure(a);
    if (s != SD_OK)
        return s;
    double n = a->rows, nnz = (double)a->nnz;
    int64_t nonempty = 0, dmax = 0, pairs = 0, close = 0, panels = 0, pmax = 0;
    int64_t sr[4] = {0, 0, 0, 0};
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t r = a->rowptr[i + 1] - a->rowptr[i];
        if (r > 0) {
            nonempty++;
            sr[r <= 4 ? 0 : r <= 32 ? 1 : r <= 256 ? 2 : 3]++;
        }
        dmax = r > dmax ? r : dmax;
        for (int64_t k = a->rowptr[i]; k + 1 < a->rowptr[i + 1]; k++) {
            pairs++;
            close += (int64_t)a->colind[k + 1] - a->colind[k] <= 8;
        }
    }
    for (int32_t p0 = 0; p0 < a->rows; p0 += 32) {
        int32_t p1 = a->rows - p0 < 32 ? a->rows : p0 + 32;
        int64_t e = a->rowptr[p1] - a->rowptr[p0];
        panels += e > 0;
        pmax = e > pmax ? e : pmax;
    }
    double mean = n > 0 ? nnz / n : 0, mean_hat = nonempty > 0 ? nnz / (double)nonempty : 0;
    double ss = 0, ss_hat = 0;
    for (int32_t i = 0; i < a->rows; i++) {
        double r = (double)(a->rowptr[i + 1] - a->rowptr[i]);
        ss += (r - mean) * (r - mean);
        if (r > 0)
            ss_hat += (r - mean_hat) * (r - mean_hat);
    }
    out[0] = n;
    out[1] = (double)nonempty;
    out[2] = nnz;
    out[3] = a->rows > 0 && a->cols > 0 ? nnz / ((double)a->rows * a->cols) : 0;
    out[4] = mean;
    out[5] = mean_hat;
    out[6] = (double)dmax;
    out[7] = mean > 0 ? sqrt(ss / n) / mean : 0;
    out[8] = mean_hat > 0 ? sqrt(ss_hat / (double)nonempty) / mean_hat : 0;
    for (int q = 0; q < 4; q++)
        out[9 + q] = nonempty > 0 ? (double)sr[q] / (double)nonempty : 0;
    out[13] = pairs > 0 ? (double)close / (double)pairs : 0;
    out[14] = panels > 0 ? nnz / (double)panels : 0;
    out[15] = (double)pmax;
    if (a->nnz > 0) {
        sdi_len_dist d;
        s = sdi_len_dist_of_rows(a->rowptr, a->rows, &d);
        if (s != SD_OK)
            return s;
        int64_t m1 = (int64_t)ceil(n * 0.01), m10 = (int64_t)ceil(n * 0.10);
        out[16] = (double)sdi_len_dist_top_sum(&d, m1) / nnz;
        out[17] = (double)sdi_len_dist_top_sum(&d, m10) / nnz;
        sdi_len_dist_free(&d);
    }
    return SD_OK;
}

void sdi_paramspmm_decider_free(sdi_paramspmm_decider *d)
{
    if (d == NULL)
        return;
    for (int q = 0; q < 4; q++)
        sdi_forest_free(&d->forest[q]);
}

static int param_of(const sdi_paramspmm_params *p, int q)
{
    return q == 0 ? p->w : q == 1 ? p->f : q == 2 ? p->v : p->s;
}

sd_status sdi_paramspmm_decider_fit(const double *X, const sdi_paramspmm_params *y, int n,
                                    const sdi_forest_opts *opts, sdi_paramspmm_decider *out)
{
    double *cls = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(cls);                                                                     \
        sdi_paramspmm_decider_free(out);                                                   \
    } while (0)
    memset(out, 0, sizeof *out);
    if (n < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ParamSpMM decider: no examples");
    cls = sdi_malloc_array((size_t)n, sizeof *cls);
    SD_CHECK_ALLOC(cls, "decider targets");
    for (int q = 0; q < 4; q++) {
        int nv = 0;
        const int *vals = sdi_paramspmm_values(q, &nv);
        for (int i = 0; i < n; i++) {
            int v = param_of(&y[i], q), c = -1;
            for (int k = 0; k < nv; k++)
                if (vals[k] == v)
                    c = k;
            if (c < 0) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_INVALID_ARG, "ParamSpMM decider: example %d: %s = %d is not "
                               "in its value set", i, param_names[q], v);
            }
            cls[i] = c;
        }
        sdi_forest_opts o = opts != NULL ? *opts : sdi_forest_opts_default();
        o.seed += (unsigned long long)q * 0x9E37ULL; /* four independent forests */
        SD_TRY(sdi_forest_fit(X, cls, n, SDI_PSPMM_NFEAT, nv, &o, &out->forest[q]));
    }
    sdi_free(cls);
    return SD_OK;
#undef SD_FREE_ALL
}

void sdi_paramspmm_decide(const sdi_paramspmm_decider *d, const double x[SDI_PSPMM_NFEAT],
                          sdi_paramspmm_params *out)
{
    int v[4];
    for (int q = 0; q < 4; q++) {
        int nv = 0;
        const int *vals = sdi_paramspmm_values(q, &nv);
        v[q] = vals[(int)sdi_forest_predict(&d->forest[q], x)];
    }
    out->w = v[0];
    out->f = v[1];
    out->v = v[2];
    out->s = v[3];
}

/* The members shared by both file versions: format, version, features, value sets. */
static void decider_header_json(sdi_json *j, int version)
{
    sdi_json_key(j, "format");
    sdi_json_string(j, "sparseditto-paramspmm");
    sdi_json_key(j, "version");
    sdi_json_int(j, version);
    sdi_json_key(j, "features");
    sdi_json_begin_array(j);
    for (int i = 0; i < SDI_PSPMM_NFEAT; i++)
        sdi_json_string(j, pspmm_names[i]);
    sdi_json_end_array(j);
    sdi_json_key(j, "values");
    sdi_json_begin_object(j);
    for (int q = 0; q < 4; q++) {
        int nv = 0;
        const int *vals = sdi_paramspmm_values(q, &nv);
        sdi_json_key(j, param_names[q]);
        sdi_json_begin_array(j);
        for (int k = 0; k < nv; k++)
            sdi_json_int(j, vals[k]);
        sdi_json_end_array(j);
    }
    sdi_json_end_object(j);
}

static void decider_forests_json(const sdi_paramspmm_decider *d, sdi_json *j)
{
    sdi_json_key(j, "forests");
    sdi_json_begin_object(j);
    for (int q = 0; q < 4; q++) {
        sdi_json_key(j, param_names[q]);
        sdi_forest_json(&d->forest[q], j);
    }
    sdi_json_end_object(j);
}

static sd_status json_write(sdi_json *j, const char *path)
{
    sd_status s = sdi_json_finish(j);
    if (s == SD_OK)
        s = sdi_model_write_file(path, j->buf, strlen(j->buf));
    sdi_json_free(j);
    return s;
}

sd_status sdi_paramspmm_decider_save(const sdi_paramspmm_decider *d, const char *path)
{
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    decider_header_json(&j, 1);
    decider_forests_json(d, &j);
    sdi_json_end_object(&j);
    return json_write(&j, path);
}

sd_status sdi_paramspmm_deciders_save(const sdi_paramspmm_deciders *d, const char *path)
{
    if (d->n < 1 || d->n > SDI_PSPMM_MAX_KS)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ParamSpMM decider: %d members", d->n);
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_json_begin_object(&j);
    decider_header_json(&j, 2);
    sdi_json_key(&j, "members");
    sdi_json_begin_array(&j);
    for (int m = 0; m < d->n; m++) {
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "k");
        sdi_json_int(&j, d->k[m]);
        decider_forests_json(&d->d[m], &j);
        sdi_json_end_object(&j);
    }
    sdi_json_end_array(&j);
    sdi_json_end_object(&j);
    return json_write(&j, path);
}

/* The format, version (1 or 2, returned) and features of a parsed decider file. */
static sd_status decider_header_check(const sdi_jvalue *v, const char *path, int *version)
{
    const char *fmt = sdi_jget_string(v, "format", "");
    double ver = sdi_jget_number(v, "version", -1);
    if (strcmp(fmt, "sparseditto-paramspmm") != 0 || (ver != 1 && ver != 2))
        return SDI_ERR(SD_ERR_PARSE, "%s: not a version-1 or -2 \"sparseditto-paramspmm\" file",
                       path);
    *version = (int)ver;
    const sdi_jvalue *fe = sdi_jget(v, "features");
    int same = fe != NULL && fe->type == SDI_JARRAY && fe->n == SDI_PSPMM_NFEAT;
    for (int i = 0; same && i < SDI_PSPMM_NFEAT; i++)
        same = fe->items[i].type == SDI_JSTRING && strcmp(fe->items[i].string, pspmm_names[i]) == 0;
    if (!same)
        return SDI_ERR(SD_ERR_PARSE, "%s: \"features\" differ from this library's %d ParamSpMM "
                       "features", path, SDI_PSPMM_NFEAT);
    return SD_OK;
}

/* The four forests of the "forests" member of obj into *out (freed by the caller on error). */
static sd_status decider_forests_from(const sdi_jvalue *obj, const char *path,
                                      sdi_paramspmm_decider *out)
{
    const sdi_jvalue *fo = sdi_jget(obj, "forests");
    for (int q = 0; q < 4; q++) {
        const sdi_jvalue *f = sdi_jget(fo, param_names[q]);
        int nv = 0;
        sdi_paramspmm_values(q, &nv);
        if (f == NULL)
            return SDI_ERR(SD_ERR_PARSE, "%s: forest \"%s\" missing", path, param_names[q]);
        sd_status s = sdi_forest_from_json(f, &out->forest[q]);
        if (s != SD_OK)
            return s;
        if (out->forest[q].nfeat != SDI_PSPMM_NFEAT || out->forest[q].nclass != nv)
            return SDI_ERR(SD_ERR_PARSE, "%s: forest \"%s\" has %d features and %d classes, "
                           "expected %d and %d", path, param_names[q], out->forest[q].nfeat,
                           out->forest[q].nclass, SDI_PSPMM_NFEAT, nv);
    }
    return SD_OK;
}

sd_status sdi_paramspmm_decider_load(const char *path, sdi_paramspmm_decider *out)
{
    memset(out, 0, sizeof *out);
    sdi_paramspmm_deciders all;
    sd_status s = sdi_paramspmm_deciders_load(path, &all);
    if (s != SD_OK)
        return s;
    if (all.n != 1 || all.k[0] != 0) {
        sdi_paramspmm_deciders_free(&all);
        return SDI_ERR(SD_ERR_PARSE, "%s: a version-2 file holds one decider per K "
                       "(sdi_paramspmm_deciders_load)", path);
    }
    *out = all.d[0]; /* the forests move to *out; the other members are empty */
    return SD_OK;
}

sd_status sdi_paramspmm_deciders_load(const char *path, sdi_paramspmm_deciders *out)
{
    char *buf = NULL;
    sdi_jvalue v;
    memset(&v, 0, sizeof v);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(buf);                                                                     \
        sdi_jvalue_free(&v);                                                               \
        sdi_paramspmm_deciders_free(out);                                                  \
        sdi_error_prefix("%s", path);                                                      \
    } while (0)
    memset(out, 0, sizeof *out);
    size_t len = 0;
    sd_status s = sdi_model_read_file(path, &buf, &len);
    if (s != SD_OK)
        return s;
    SD_TRY(sdi_json_parse(buf, (long)len, &v));
    int version = 0;
    SD_TRY(decider_header_check(&v, path, &version));
    if (version == 1) {
        out->n = 1;
        out->k[0] = 0;
        SD_TRY(decider_forests_from(&v, path, &out->d[0]));
    } else {
        const sdi_jvalue *mem = sdi_jget(&v, "members");
        if (mem == NULL || mem->type != SDI_JARRAY || mem->n < 1 || mem->n > SDI_PSPMM_MAX_KS) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_PARSE, "%s: \"members\" is not an array of 1 to %d deciders",
                           path, SDI_PSPMM_MAX_KS);
        }
        for (int m = 0; m < mem->n; m++) {
            double k = sdi_jget_number(&mem->items[m], "k", -1);
            if (!(k >= 1 && k <= 65536 && k == floor(k)) || (m > 0 && k <= out->k[m - 1])) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_PARSE, "%s: member %d: \"k\" must be an integer in "
                               "1..65536, ascending and distinct", path, m);
            }
            out->k[m] = (int)k;
            SD_TRY(decider_forests_from(&mem->items[m], path, &out->d[m]));
        }
        out->n = mem->n;
    }
    sdi_free(buf);
    sdi_jvalue_free(&v);
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_paramspmm_deciders_fit(const double *X, const sdi_paramspmm_params *y,
                                     const int *ks, int n, const sdi_forest_opts *opts,
                                     sdi_paramspmm_deciders *out)
{
    double *xs = NULL;
    sdi_paramspmm_params *ys = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(xs);                                                                      \
        sdi_free(ys);                                                                      \
        sdi_paramspmm_deciders_free(out);                                                  \
    } while (0)
    memset(out, 0, sizeof *out);
    if (n < 1)
        return SDI_ERR(SD_ERR_INVALID_ARG, "ParamSpMM decider: no examples");
    int kv[SDI_PSPMM_MAX_KS], nk = 0; /* the distinct K, ascending */
    for (int i = 0; i < n; i++) {
        if (ks[i] < 1)
            return SDI_ERR(SD_ERR_INVALID_ARG, "ParamSpMM decider: example %d: K = %d", i, ks[i]);
        int pos = 0;
        while (pos < nk && kv[pos] < ks[i])
            pos++;
        if (pos < nk && kv[pos] == ks[i])
            continue;
        if (nk == SDI_PSPMM_MAX_KS)
            return SDI_ERR(SD_ERR_INVALID_ARG, "ParamSpMM decider: more than %d values of K",
                           SDI_PSPMM_MAX_KS);
        memmove(&kv[pos + 1], &kv[pos], (size_t)(nk - pos) * sizeof kv[0]);
        kv[pos] = ks[i];
        nk++;
    }
    xs = sdi_malloc_array((size_t)n * SDI_PSPMM_NFEAT, sizeof *xs);
    SD_CHECK_ALLOC(xs, "decider examples");
    ys = sdi_malloc_array((size_t)n, sizeof *ys);
    SD_CHECK_ALLOC(ys, "decider examples");
    for (int m = 0; m < nk; m++) {
        int cnt = 0;
        for (int i = 0; i < n; i++)
            if (ks[i] == kv[m]) {
                memcpy(xs + (size_t)cnt * SDI_PSPMM_NFEAT, X + (size_t)i * SDI_PSPMM_NFEAT,
                       SDI_PSPMM_NFEAT * sizeof *xs);
                ys[cnt++] = y[i];
            }
        SD_TRY(sdi_paramspmm_decider_fit(xs, ys, cnt, opts, &out->d[m]));
        out->k[m] = kv[m];
    }
    out->n = nk;
    sdi_free(xs);
    sdi_free(ys);
    return SD_OK;
#undef SD_FREE_ALL
}

const sdi_paramspmm_decider *sdi_paramspmm_deciders_for(const sdi_paramspmm_deciders *d, int k)
{
    int best = 0;
    double gap = INFINITY;
    for (int m = 0; m < d->n; m++) {
        if (d->k[m] == 0 || d->k[m] == k)
            return &d->d[m];
        double g = fabs(log2((double)d->k[m]) - log2((double)(k > 0 ? k : 1)));
        if (g < gap) /* strict: on a tie the earlier (smaller) K stays */
            gap = g, best = m;
    }
    return &d->d[best];
}

void sdi_paramspmm_deciders_free(sdi_paramspmm_deciders *d)
{
    if (d == NULL)
        return;
    for (int m = 0; m < SDI_PSPMM_MAX_KS; m++)
        sdi_paramspmm_decider_free(&d->d[m]);
    d->n = 0;
}
