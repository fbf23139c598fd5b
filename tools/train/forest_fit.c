/* tools/train/forest_fit.c: fitting of random forests and of ParamSpMM's deciders
 * (src/model/forest.h), and writing the deciders' files; behind `sparseditto train --forest`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/model_files.h"
#include "forest_fit.h"

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
                               "in its value set", i, sdi_paramspmm_param_names[q], v);
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
        sdi_json_string(j, sdi_paramspmm_feature_name(i));
    sdi_json_end_array(j);
    sdi_json_key(j, "values");
    sdi_json_begin_object(j);
    for (int q = 0; q < 4; q++) {
        int nv = 0;
        const int *vals = sdi_paramspmm_values(q, &nv);
        sdi_json_key(j, sdi_paramspmm_param_names[q]);
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
        sdi_json_key(j, sdi_paramspmm_param_names[q]);
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
