/* src/model/forest.c: random forests of CART trees (forest.h), their JSON form, and
 * ParamSpMM's decider: its matrix features, four parameter classifiers and loading.
 * Fitting and saving are a tool: tools/train/forest_fit.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "model_files.h"
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
const char *const sdi_paramspmm_param_names[4] = {"W", "F", "V", "S"};
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
        const sdi_jvalue *f = sdi_jget(fo, sdi_paramspmm_param_names[q]);
        int nv = 0;
        sdi_paramspmm_values(q, &nv);
        if (f == NULL)
            return SDI_ERR(SD_ERR_PARSE, "%s: forest \"%s\" missing", path,
                           sdi_paramspmm_param_names[q]);
        sd_status s = sdi_forest_from_json(f, &out->forest[q]);
        if (s != SD_OK)
            return s;
        if (out->forest[q].nfeat != SDI_PSPMM_NFEAT || out->forest[q].nclass != nv)
            return SDI_ERR(SD_ERR_PARSE, "%s: forest \"%s\" has %d features and %d classes, "
                           "expected %d and %d", path, sdi_paramspmm_param_names[q],
                           out->forest[q].nfeat, out->forest[q].nclass, SDI_PSPMM_NFEAT, nv);
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
