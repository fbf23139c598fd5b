/* tools/corpus/corpus.c: the energy model's corpus: JSONL reader and writer (format in
 * corpus.h), folds and hold-outs, and the synthetic corpus generator. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "core/io.h"
#include "core/json_parse.h"
#include "core/rng.h"
#include "corpus.h"

#define SDI_EM_NSHAPE_CORPUS 5 /* shape classes (sd_shape_class) */

void sdi_corpus_free(sdi_corpus *c)
{
    if (c == NULL)
        return;
    sdi_free(c->records);
    sdi_free(c->tasks);
    memset(c, 0, sizeof *c);
}

static int shape_from_name(const char *s)
{
    for (int c = 0; c < 5; c++)
        if (strcmp(s, sd_shape_class_name((sd_shape_class)c)) == 0)
            return c;
    return -1;
}

/* Appends one slot to a growing array of elem-byte items. */
static sd_status grow(void **arr, int n, int *cap, size_t elem)
{
    if (n < *cap)
        return SD_OK;
    int nc = *cap > 0 ? *cap * 2 : 64;
    void *p = sdi_realloc_array(*arr, (size_t)nc, elem);
    if (p == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory growing the corpus");
    *arr = p;
    *cap = nc;
    return SD_OK;
}

/* One parsed line into c (line is 1-based, for messages). */
static sd_status parse_record(const sdi_jvalue *v, long line, sdi_corpus *c, int *rcap, int *tcap)
{
    if (v->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "line %ld: not a JSON object", line);
    sd_status s = grow((void **)&c->records, c->nrecords, rcap, sizeof *c->records);
    if (s != SD_OK)
        return s;
    sdi_corpus_record *r = &c->records[c->nrecords];
    memset(r, 0, sizeof *r);
    snprintf(r->matrix, sizeof r->matrix, "%s", sdi_jget_string(v, "matrix", ""));
    const sdi_jvalue *fe = sdi_jget(v, "features");
    if (fe == NULL || fe->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "line %ld: missing \"features\" object", line);
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        const char *name = sdi_feature_get(i)->name;
        const sdi_jvalue *x = sdi_jget(fe, name);
        if (x == NULL)
            return SDI_ERR(SD_ERR_PARSE, "line %ld: feature \"%s\" missing", line, name);
        if (x->type != SDI_JNUMBER || !isfinite(x->number))
            return SDI_ERR(SD_ERR_PARSE, "line %ld: feature \"%s\" is not a finite number",
                           line, name);
        r->features[i] = x->number;
    }
    for (int i = 0; i < fe->n; i++)
        if (sdi_feature_index(fe->keys[i]) < 0)
            return SDI_ERR(SD_ERR_PARSE, "line %ld: unknown feature \"%s\"", line, fe->keys[i]);
    const char *shape = sdi_jget_string(v, "shape_class", NULL);
    int sc = shape != NULL ? shape_from_name(shape) : -1;
    if (sc < 0)
        return SDI_ERR(SD_ERR_PARSE, "line %ld: \"shape_class\" missing or not one of uniform, "
                                     "moderate, skewed, power-law, bimodal", line);
    r->shape = (sd_shape_class)sc;
    const sdi_jvalue *tasks = sdi_jget(v, "tasks");
    if (tasks == NULL || tasks->type != SDI_JARRAY || tasks->n == 0)
        return SDI_ERR(SD_ERR_PARSE, "line %ld: \"tasks\" missing or empty", line);
    for (int ti = 0; ti < tasks->n; ti++) {
        const sdi_jvalue *t = &tasks->items[ti];
        if (t->type != SDI_JOBJECT)
            return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d is not an object", line, ti);
        int op = sdi_op_from_name(sdi_jget_string(t, "op", NULL));
        if (op < 0)
            return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d: \"op\" is not spmv, spmm or spgemm",
                           line, ti);
        double k = sdi_jget_number(t, "k", 1);
        if (!(k >= 1 && k <= 65536 && k == floor(k)))
            return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d: \"k\" is not an integer in 1..65536",
                           line, ti);
        double base = sdi_jget_number(t, "baseline_us", NAN);
        if (!(base > 0 && isfinite(base)))
            return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d: \"baseline_us\" missing or not > 0",
                           line, ti);
        const sdi_jvalue *tm = sdi_jget(t, "templates");
        if (tm == NULL || tm->type != SDI_JOBJECT)
            return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d: \"templates\" object missing", line,
                           ti);
        s = grow((void **)&c->tasks, c->ntasks, tcap, sizeof *c->tasks);
        if (s != SD_OK)
            return s;
        sdi_corpus_task *task = &c->tasks[c->ntasks];
        memset(task, 0, sizeof *task);
        task->record = c->nrecords;
        task->op = (sd_op)op;
        task->k = (int)k;
        task->baseline_us = base;
        int nv = 0;
        const char *const *vocab = sdi_vocabulary((sd_op)op, &nv);
        for (int q = 0; q < tm->n; q++) {
            int idx = -1;
            for (int s2 = 0; s2 < nv; s2++)
                if (strcmp(vocab[s2], tm->keys[q]) == 0)
                    idx = s2;
            if (idx < 0)
                return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d: \"%s\" is not a %s template",
                               line, ti, tm->keys[q], sdi_op_name((sd_op)op));
            const sdi_jvalue *x = &tm->items[q];
            if (x->type == SDI_JNULL)
                continue;
            if (x->type != SDI_JNUMBER || !(x->number > 0) || !isfinite(x->number))
                return SDI_ERR(SD_ERR_PARSE, "line %ld: task %d: time of \"%s\" is not > 0",
                               line, ti, tm->keys[q]);
            task->us[idx] = x->number;
        }
        c->ntasks++;
    }
    c->nrecords++;
    return SD_OK;
}

sd_status sdi_corpus_parse(const char *text, size_t len, sdi_corpus *out)
{
    memset(out, 0, sizeof *out);
    int rcap = 0, tcap = 0;
    size_t pos = 0;
    long line = 0;
    while (pos < len) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        size_t a = pos;
        while (a < end && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r'))
            a++;
        if (a < end) {
            sdi_jvalue v;
            sd_status s = sdi_json_parse(text + a, (long)(end - a), &v);
            if (s != SD_OK) {
                sdi_error_prefix("line %ld", line);
                sdi_corpus_free(out);
                return s;
            }
            /* A line with "error" records a (matrix, task) the corpus builder could not
             * measure: it keeps the builder from retrying and is no example. */
            if (sdi_jget(&v, "error") != NULL)
                s = SD_OK;
            else
                s = parse_record(&v, line, out, &rcap, &tcap);
            sdi_jvalue_free(&v);
            if (s != SD_OK) {
                sdi_corpus_free(out);
                return s;
            }
        }
        pos = end + 1;
    }
    return SD_OK;
}

sd_status sdi_corpus_read(const char *path, sdi_corpus *out)
{
    memset(out, 0, sizeof *out);
    char *buf = NULL;
    size_t len = 0;
    sd_status s = sdi_model_read_file(path, &buf, &len);
    if (s != SD_OK)
        return s;
    s = sdi_corpus_parse(buf, len, out);
    sdi_free(buf);
    if (s != SD_OK)
        sdi_error_prefix("%s", path);
    return s;
}

sd_status sdi_corpus_write(const sdi_corpus *c, const char *path)
{
    sdi_json j;
    /* Records are lines: one writer per record, joined with newlines. */
    char *all = NULL;
    size_t len = 0;
    for (int r = 0; r < c->nrecords; r++) {
        const sdi_corpus_record *rec = &c->records[r];
        sdi_json_init(&j, 0);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "matrix");
        sdi_json_string(&j, rec->matrix);
        sdi_json_key(&j, "features");
        sdi_json_begin_object(&j);
        for (int i = 0; i < SD_NUM_FEATURES; i++) {
            sdi_json_key(&j, sdi_feature_get(i)->name);
            char num[40];
            snprintf(num, sizeof num, "%.17g", rec->features[i]);
            sdi_json_raw(&j, num);
        }
        sdi_json_end_object(&j);
        sdi_json_key(&j, "shape_class");
        sdi_json_string(&j, sd_shape_class_name(rec->shape));
        sdi_json_key(&j, "tasks");
        sdi_json_begin_array(&j);
        for (int t = 0; t < c->ntasks; t++) {
            const sdi_corpus_task *task = &c->tasks[t];
            if (task->record != r)
                continue;
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "op");
            sdi_json_string(&j, sdi_op_name(task->op));
            sdi_json_key(&j, "k");
            sdi_json_int(&j, task->k);
            sdi_json_key(&j, "baseline_us");
            sdi_json_number(&j, task->baseline_us);
            sdi_json_key(&j, "templates");
            sdi_json_begin_object(&j);
            int nv = 0;
            const char *const *vocab = sdi_vocabulary(task->op, &nv);
            for (int s = 0; s < nv; s++)
                if (task->us[s] > 0) {
                    sdi_json_key(&j, vocab[s]);
                    sdi_json_number(&j, task->us[s]);
                }
            sdi_json_end_object(&j);
            sdi_json_end_object(&j);
        }
        sdi_json_end_array(&j);
        sdi_json_end_object(&j);
        sd_status s = sdi_json_finish(&j);
        if (s == SD_OK) {
            size_t l = strlen(j.buf);
            char *p = sdi_realloc_array(all, len + l + 2, 1);
            if (p == NULL) {
                s = SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory writing the corpus");
            } else {
                all = p;
                memcpy(all + len, j.buf, l);
                len += l;
                all[len++] = '\n';
                all[len] = '\0';
            }
        }
        sdi_json_free(&j);
        if (s != SD_OK) {
            sdi_free(all);
            return s;
        }
    }
    sd_status s = sdi_model_write_file(path, all != NULL ? all : "", len);
    sdi_free(all);
    return s;
}

/* ------------------------------------------------------------------ folds */
static int cmp_str_ptr(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

sd_status sdi_corpus_folds(const sdi_corpus *c, int folds, unsigned long long seed, int *fold)
{
    if (folds < 2)
        return SDI_ERR(SD_ERR_INVALID_ARG, "cross-validation needs at least 2 folds (got %d)",
                       folds);
    const char **names = sdi_malloc_array(c->nrecords > 0 ? (size_t)c->nrecords : 1, sizeof *names);
    if (names == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for folds");
    for (int r = 0; r < c->nrecords; r++)
        names[r] = c->records[r].matrix;
    qsort(names, (size_t)c->nrecords, sizeof *names, cmp_str_ptr);
    int ng = 0; /* unique names, sorted: the order does not depend on the file's */
    for (int r = 0; r < c->nrecords; r++)
        if (ng == 0 || strcmp(names[ng - 1], names[r]) != 0)
            names[ng++] = names[r];
    if (ng < folds) {
        sdi_free(names);
        return SDI_ERR(SD_ERR_INVALID_ARG, "cross-validation: %d matrices for %d folds", ng, folds);
    }
    sdi_rng s;
    sdi_rng_seed(&s, seed, 0xc0ffee /* stream: folds */, 0);
    for (int i = ng - 1; i > 0; i--) { /* Fisher–Yates over the unique names */
        int j = (int)sdi_rng_below(&s, (uint64_t)i + 1);
        const char *t = names[i];
        names[i] = names[j];
        names[j] = t;
    }
    for (int r = 0; r < c->nrecords; r++) {
        fold[r] = -1;
        for (int g = 0; g < ng; g++)
            if (strcmp(names[g], c->records[r].matrix) == 0) {
                fold[r] = g % folds;
                break;
            }
    }
    sdi_free(names);
    return SD_OK;
}

/* ------------------------------------------------------------------ stratified splits */
typedef struct {
    const char *name;
    int record; /* first record of the matrix in file order */
    int shape;
    int cls_rank; /* position in its class's shuffled order */
} strat_group;

static int cmp_group_name(const void *a, const void *b)
{
    const strat_group *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : x->record - y->record;
}

/* The matrices (unique names; a matrix takes the shape of its first record) with a rank
 * in their shape class's order shuffled by seed; cnt[c] = matrices of class c. *groups
 * (sdi_free) has *ng entries sorted by name. */
static sd_status stratify(const sdi_corpus *c, unsigned long long seed, strat_group **groups,
                          int *ng, int cnt[SDI_EM_NSHAPE_CORPUS])
{
    *groups = NULL;
    *ng = 0;
    memset(cnt, 0, sizeof(int) * SDI_EM_NSHAPE_CORPUS);
    strat_group *g = sdi_malloc_array(c->nrecords > 0 ? (size_t)c->nrecords : 1, sizeof *g);
    if (g == NULL)
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for folds");
    for (int r = 0; r < c->nrecords; r++)
        g[r] = (strat_group){c->records[r].matrix, r, (int)c->records[r].shape, 0};
    qsort(g, (size_t)c->nrecords, sizeof *g, cmp_group_name);
    int n = 0;
    for (int r = 0; r < c->nrecords; r++)
        if (n == 0 || strcmp(g[n - 1].name, g[r].name) != 0)
            g[n++] = g[r];
    sdi_rng s;
    sdi_rng_seed(&s, seed, 0x57a7 /* stream: stratified splits */, 0);
    for (int cls = 0; cls < SDI_EM_NSHAPE_CORPUS; cls++) {
        for (int i = 0; i < n; i++)
            if (g[i].shape == cls)
                g[i].cls_rank = cnt[cls]++;
        /* Fisher–Yates over the ranks of the class (groups in name order: the result does
         * not depend on the file's order). */
        for (int i = cnt[cls] - 1; i > 0; i--) {
            int j = (int)sdi_rng_below(&s, (uint64_t)i + 1), gi = -1, gj = -1;
            for (int q = 0; q < n; q++)
                if (g[q].shape == cls) {
                    if (g[q].cls_rank == i)
                        gi = q;
                    if (g[q].cls_rank == j)
                        gj = q;
                }
            g[gi].cls_rank = j;
            g[gj].cls_rank = i;
        }
    }
    *groups = g;
    *ng = n;
    return SD_OK;
}

/* value[r] of every record from its matrix's group value gv. */
static void assign_by_name(const sdi_corpus *c, const strat_group *g, int ng, const int *gv,
                           int *value)
{
    for (int r = 0; r < c->nrecords; r++) {
        strat_group key = {c->records[r].matrix, -1, 0, 0};
        int lo = 0, hi = ng - 1;
        value[r] = -1;
        while (lo <= hi) { /* groups are sorted by name */
            int mid = (lo + hi) / 2, cmp = strcmp(g[mid].name, key.name);
            if (cmp == 0) {
                value[r] = gv[mid];
                break;
            }
            if (cmp < 0)
                lo = mid + 1;
            else
                hi = mid - 1;
        }
    }
}

sd_status sdi_corpus_folds_stratified(const sdi_corpus *c, int folds, unsigned long long seed,
                                      int *fold)
{
    if (folds < 2)
        return SDI_ERR(SD_ERR_INVALID_ARG, "cross-validation needs at least 2 folds (got %d)",
                       folds);
    strat_group *g = NULL;
    int ng = 0, cnt[SDI_EM_NSHAPE_CORPUS];
    sd_status s = stratify(c, seed, &g, &ng, cnt);
    if (s != SD_OK)
        return s;
    int *gv = sdi_malloc_array(ng > 0 ? (size_t)ng : 1, sizeof *gv);
    if (gv == NULL || ng < folds) {
        sdi_free(g);
        sdi_free(gv);
        return gv == NULL ? SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for folds")
                          : SDI_ERR(SD_ERR_INVALID_ARG, "cross-validation: %d matrices for %d folds",
                                    ng, folds);
    }
    /* Class c's members are dealt round-robin starting where class c−1 stopped: each class
     * spreads evenly (± 1) and so do the fold sizes. */
    int off[SDI_EM_NSHAPE_CORPUS], acc = 0;
    for (int cls = 0; cls < SDI_EM_NSHAPE_CORPUS; cls++) {
        off[cls] = acc;
        acc += cnt[cls];
    }
    for (int i = 0; i < ng; i++)
        gv[i] = (off[g[i].shape] + g[i].cls_rank) % folds;
    assign_by_name(c, g, ng, gv, fold);
    sdi_free(gv);
    sdi_free(g);
    return SD_OK;
}

sd_status sdi_corpus_holdout(const sdi_corpus *c, int nhold, unsigned long long seed, int *held)
{
    if (nhold < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "hold-out: %d matrices", nhold);
    strat_group *g = NULL;
    int ng = 0, cnt[SDI_EM_NSHAPE_CORPUS];
    sd_status s = stratify(c, seed ^ 0x401d07u, &g, &ng, cnt);
    if (s != SD_OK)
        return s;
    int *gv = sdi_malloc_array(ng > 0 ? (size_t)ng : 1, sizeof *gv);
    if (gv == NULL || nhold >= ng) {
        sdi_free(g);
        sdi_free(gv);
        return gv == NULL ? SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the hold-out")
                          : SDI_ERR(SD_ERR_INVALID_ARG, "hold-out of %d matrices leaves none of %d "
                                    "to train on", nhold, ng);
    }
    /* Quotas by largest remainder: class c gets ⌊nhold·cnt_c/ng⌋, the rest of nhold goes
     * to the largest fractional parts (lowest class first on ties). */
    int quota[SDI_EM_NSHAPE_CORPUS], given = 0;
    double frac[SDI_EM_NSHAPE_CORPUS];
    for (int cls = 0; cls < SDI_EM_NSHAPE_CORPUS; cls++) {
        double want = (double)nhold * cnt[cls] / ng;
        quota[cls] = (int)floor(want);
        frac[cls] = want - quota[cls];
        given += quota[cls];
    }
    for (; given < nhold; given++) {
        int best = -1;
        for (int cls = 0; cls < SDI_EM_NSHAPE_CORPUS; cls++)
            if (quota[cls] < cnt[cls] && (best < 0 || frac[cls] > frac[best]))
                best = cls;
        quota[best]++;
        frac[best] = -1;
    }
    for (int i = 0; i < ng; i++)
        gv[i] = g[i].cls_rank < quota[g[i].shape];
    assign_by_name(c, g, ng, gv, held);
    for (int r = 0; r < c->nrecords; r++)
        held[r] = held[r] > 0;
    sdi_free(gv);
    sdi_free(g);
    return SD_OK;
}

sd_status sdi_corpus_subset(const sdi_corpus *c, const int *keep, sdi_corpus *out)
{
    memset(out, 0, sizeof *out);
    int nr = 0, nt = 0;
    for (int r = 0; r < c->nrecords; r++)
        nr += keep[r] != 0;
    for (int t = 0; t < c->ntasks; t++)
        nt += keep[c->tasks[t].record] != 0;
    out->records = sdi_calloc(nr > 0 ? (size_t)nr : 1, sizeof *out->records);
    out->tasks = sdi_calloc(nt > 0 ? (size_t)nt : 1, sizeof *out->tasks);
    int *map = sdi_malloc_array(c->nrecords > 0 ? (size_t)c->nrecords : 1, sizeof *map);
    if (out->records == NULL || out->tasks == NULL || map == NULL) {
        sdi_free(map);
        sdi_corpus_free(out);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a corpus subset");
    }
    for (int r = 0; r < c->nrecords; r++)
        if (keep[r]) {
            map[r] = out->nrecords;
            out->records[out->nrecords++] = c->records[r];
        }
    for (int t = 0; t < c->ntasks; t++)
        if (keep[c->tasks[t].record]) {
            out->tasks[out->ntasks] = c->tasks[t];
            out->tasks[out->ntasks++].record = map[c->tasks[t].record];
        }
    sdi_free(map);
    return SD_OK;
}

/* ------------------------------------------------------------------ synthetic corpus */

static double unif(sdi_rng *s, double a, double b) { return a + (b - a) * sdi_rng_uniform(s); }

static double logunif(sdi_rng *s, double a, double b)
{
    return exp(unif(s, log(a), log(b)));
}

/* The rules the synthetic times follow (thresholds sit in the gaps between regions). */
int sdi_corpus_synthetic_best(const double *x, sd_op op, int k)
{
    double cv = x[SDI_F_ROW_CV], dense = x[SDI_F_DENSE_TILE_NNZ_FRAC];
    switch (op) {
    case SD_OP_SPMV: /* csr coo sell16 sell32 sell512 bsr4 bsr8 bsr16 tiles16 */
        if (cv > 3)
            return 1;
        if (dense > 0.5)
            return 6;
        if (cv < 0.6)
            return 3;
        return 0;
    case SD_OP_SPMM: /* csr coo bsr4 bsr8 bsr16 bell16 bell32 tc */
        if (dense > 0.5)
            return k >= 32 ? 7 : 3;
        if (cv > 3)
            return 1;
        return 0;
    case SD_OP_SPGEMM: /* csr_hash smem_tiled_hash hybrid */
        if (x[SDI_F_U_MAX] > 32768)
            return 2;
        if (x[SDI_F_FIT_4K] > 0.9)
            return 1;
        return 0;
    }
    return 0;
}

static void synth_features(sdi_rng *s, double *x, sd_shape_class *shape)
{
    int skew = (int)(sdi_rng_below(s, 3)), block = (int)(sdi_rng_below(s, 2)), ulev = (int)(sdi_rng_below(s, 3));
    double rows = floor(logunif(s, 1e3, 1e7)), cols = floor(rows * unif(s, 0.5, 2.0));
    double mean = logunif(s, 2, 64), nnz = floor(rows * mean);
    double cv = skew == 0 ? unif(s, 0.05, 0.4) : skew == 1 ? unif(s, 0.8, 1.6) : unif(s, 4, 10);
    *shape = skew == 0 ? SD_SHAPE_UNIFORM : skew == 1 ? SD_SHAPE_MODERATE
             : (sdi_rng_next(s) & 1) ? SD_SHAPE_POWER_LAW : SD_SHAPE_SKEWED;
    x[SDI_F_ROWS] = rows;
    x[SDI_F_COLS] = cols;
    x[SDI_F_NNZ] = nnz;
    x[SDI_F_DENSITY] = nnz / (rows * cols);
    x[SDI_F_ROW_MEAN] = mean;
    x[SDI_F_ROW_MAX] = floor(mean * (1 + cv * unif(s, 2, 10)));
    x[SDI_F_ROW_CV] = cv;
    x[SDI_F_ROW_Q25] = unif(s, 0.2, 1.0);
    x[SDI_F_ROW_Q50] = unif(s, 0.5, 1.2);
    x[SDI_F_ROW_Q75] = unif(s, 1.0, 2.0);
    x[SDI_F_EMPTY_ROW_FRAC] = unif(s, 0, 0.1);
    x[SDI_F_COL_MAX] = unif(s, 1, 50);
    x[SDI_F_COL_CV] = unif(s, 0, 3);
    x[SDI_F_ROW_SPAN] = unif(s, 0, 1);
    x[SDI_F_COL_GAP] = logunif(s, 1, 1000);
    x[SDI_F_DIAG_FRAC] = unif(s, 0, 1);
    x[SDI_F_DENSE_TILE_NNZ_FRAC] = block ? unif(s, 0.7, 1.0) : unif(s, 0, 0.2);
    x[SDI_F_DENSE_TILE_FRAC] = x[SDI_F_DENSE_TILE_NNZ_FRAC] * unif(s, 0.5, 1.0);
    x[SDI_F_RHO_ELL] = x[SDI_F_ROW_MAX] / mean;
    for (int i = SDI_F_RHO_SELL16; i <= SDI_F_RHO_SELL512; i++)
        x[i] = 1 + cv * unif(s, 0.2, 2.0);
    for (int i = SDI_F_RHO_BSR4; i <= SDI_F_RHO_BELL16; i++)
        x[i] = block ? unif(s, 1.0, 1.5) : unif(s, 2, 16);
    double umax = ulev == 0 ? logunif(s, 64, 512) : ulev == 1 ? logunif(s, 1e4, 3e4)
                                                               : logunif(s, 1e5, 1e7);
    x[SDI_F_U_TOTAL] = floor(nnz * unif(s, 4, 64));
    x[SDI_F_U_MAX] = floor(umax);
    x[SDI_F_U_P95] = floor(umax * unif(s, 0.1, 0.5));
    x[SDI_F_U_CV] = unif(s, 0, 3);
    x[SDI_F_UT_TOTAL] = floor(x[SDI_F_U_TOTAL] * unif(s, 0.5, 2));
    x[SDI_F_UT_CV] = unif(s, 0, 3);
    x[SDI_F_FIT_512] = ulev == 0 ? unif(s, 0.9, 1.0) : unif(s, 0.1, 0.6);
    x[SDI_F_FIT_4K] = ulev == 0 ? unif(s, 0.95, 1.0) : unif(s, 0.3, 0.7);
    x[SDI_F_FIT_32K] = ulev == 2 ? unif(s, 0.8, 0.99) : 1.0;
    x[SDI_F_GAMMA] = unif(s, 1, 10);
}

static void synth_task(sdi_rng *s, const double *x, sd_op op, int k, int record,
                       sdi_corpus_task *t)
{
    memset(t, 0, sizeof *t);
    t->record = record;
    t->op = op;
    t->k = k;
    double scale = 2.0 + x[SDI_F_NNZ] / 2e5 * (op == SD_OP_SPMM ? k / 8.0 : 1.0) *
                             (op == SD_OP_SPGEMM ? 4.0 : 1.0);
    int nv = 0;
    sdi_vocabulary(op, &nv);
    int best = sdi_corpus_synthetic_best(x, op, k);
    for (int q = 0; q < nv; q++) {
        double u = unif(s, 0, 1);
        if (q == best)
            t->us[q] = scale * unif(s, 0.97, 1.03);
        else if (u >= 0.15) /* the tuner leaves some templates unmeasured */
            t->us[q] = scale * unif(s, 1.25, 3.0);
    }
    t->baseline_us = scale * unif(s, 1.05, 2.5);
}

sd_status sdi_corpus_synthetic(unsigned long long seed, int nrecords, sdi_corpus *out)
{
    memset(out, 0, sizeof *out);
    if (nrecords < 0)
        return SDI_ERR(SD_ERR_INVALID_ARG, "synthetic corpus: %d records", nrecords);
    out->records = sdi_calloc(nrecords > 0 ? (size_t)nrecords : 1, sizeof *out->records);
    out->tasks = sdi_calloc(nrecords > 0 ? (size_t)nrecords * 3 : 1, sizeof *out->tasks);
    if (out->records == NULL || out->tasks == NULL) {
        sdi_corpus_free(out);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a synthetic corpus");
    }
    sdi_rng s;
    sdi_rng_seed(&s, seed, 0x5d17c0a5 /* stream: synthetic corpus */, 0);
    static const int ks[3] = {8, 32, 128};
    for (int r = 0; r < nrecords; r++) {
        sdi_corpus_record *rec = &out->records[r];
        snprintf(rec->matrix, sizeof rec->matrix, "synthetic-%llu-%d", seed, r);
        synth_features(&s, rec->features, &rec->shape);
        synth_task(&s, rec->features, SD_OP_SPMV, 1, r, &out->tasks[out->ntasks++]);
        int k = ks[sdi_rng_below(&s, 3)];
        synth_task(&s, rec->features, SD_OP_SPMM, k, r, &out->tasks[out->ntasks++]);
        synth_task(&s, rec->features, SD_OP_SPGEMM, 1, r, &out->tasks[out->ntasks++]);
    }
    out->nrecords = nrecords;
    return SD_OK;
}

int sdi_corpus_count_matrices(const sdi_corpus *c, const int *keep)
{
    int n = 0;
    for (int r = 0; r < c->nrecords; r++) {
        if (keep != NULL && !keep[r])
            continue;
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = (keep == NULL || keep[q]) && strcmp(c->records[q].matrix, c->records[r].matrix) == 0;
        n += !seen;
    }
    return n;
}
