/* tools/corpus/pcsr_data.c: ParamSpMM decider data from a measured corpus: the "pcsr"
 * member of the corpus builder's spmm lines (tools/corpus/corpus_build.h) gives ParamSpMM's
 * 18 features and every PCSR configuration measured; a task keeps the times of the
 * configurations of ParamSpMM's own space (32 threads per PCSR row, W, F, V, S in their
 * value sets), an example is its features with the fastest of them. */
#include <math.h>
#include <string.h>

#include "core/json_parse.h"
#include "model/model_files.h"
#include "pcsr_data.h"

/* Position of v in the value set of param; -1 when absent. */
static int value_pos(int param, int v)
{
    int n = 0;
    const int *vals = sdi_paramspmm_values(param, &n);
    for (int i = 0; i < n; i++)
        if (vals[i] == v)
            return i;
    return -1;
}

int sdi_paramspmm_config_index(const sdi_paramspmm_params *p)
{
    int w = value_pos(0, p->w), f = value_pos(1, p->f), v = value_pos(2, p->v),
        s = value_pos(3, p->s);
    if (w < 0 || f < 0 || v < 0 || s < 0)
        return -1;
    return ((w * 3 + f) * 2 + v) * 2 + s;
}

void sdi_paramspmm_config_of(int index, sdi_paramspmm_params *out)
{
    int n = 0;
    out->s = sdi_paramspmm_values(3, &n)[index % 2];
    out->v = sdi_paramspmm_values(2, &n)[index / 2 % 2];
    out->f = sdi_paramspmm_values(1, &n)[index / 4 % 3];
    out->w = sdi_paramspmm_values(0, &n)[index / 12];
}

/* The task of one line; 0 when it has none. */
static int line_task(const sdi_jvalue *v, int k_filter, sdi_pcsr_task *t)
{
    if (sdi_jget(v, "error") != NULL ||
        sdi_op_from_name(sdi_jget_string(v, "op", NULL)) != SD_OP_SPMM)
        return 0;
    double k = sdi_jget_number(v, "k", 0);
    if (!(k >= 1 && k <= 65536 && k == floor(k)) || (k_filter > 0 && k != k_filter))
        return 0;
    const sdi_jvalue *p = sdi_jget(v, "pcsr");
    const sdi_jvalue *f = p != NULL ? sdi_jget(p, "features") : NULL;
    const sdi_jvalue *cf = p != NULL ? sdi_jget(p, "configs") : NULL;
    if (f == NULL || f->type != SDI_JARRAY || f->n != SDI_PSPMM_NFEAT || cf == NULL ||
        cf->type != SDI_JARRAY)
        return 0;
    memset(t, 0, sizeof *t);
    snprintf(t->matrix, sizeof t->matrix, "%s", sdi_jget_string(v, "matrix", ""));
    t->k = (int)k;
    for (int i = 0; i < SDI_PSPMM_NFEAT; i++) {
        if (f->items[i].type != SDI_JNUMBER || !isfinite(f->items[i].number))
            return 0;
        t->x[i] = f->items[i].number;
    }
    t->best = -1;
    for (int i = 0; i < cf->n; i++) {
        const sdi_jvalue *c = &cf->items[i];
        double us = sdi_jget_number(c, "us", NAN), group = sdi_jget_number(c, "group", 32);
        sdi_paramspmm_params q = {(int)sdi_jget_number(c, "w", -1),
                                  (int)sdi_jget_number(c, "f", -1),
                                  (int)sdi_jget_number(c, "v", -1),
                                  (int)sdi_jget_number(c, "s", -1)};
        int idx = sdi_paramspmm_config_index(&q);
        if (!(us > 0) || !isfinite(us) || (group != 32 && group != 0) || idx < 0)
            continue;
        if (t->us[idx] == 0 || us < t->us[idx])
            t->us[idx] = us;
        if (t->best < 0 || us < t->us[t->best])
            t->best = idx;
    }
    return t->best >= 0;
}

sd_status sdi_pcsr_tasks_parse(const char *text, size_t len, int k_filter, sdi_pcsr_task **out,
                               int *n)
{
    sdi_pcsr_task *ts = NULL;
    *out = NULL;
    *n = 0;
    int cap = 0, cnt = 0;
    long line = 0;
    for (size_t pos = 0; pos < len;) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n')
            end++;
        size_t a = pos;
        while (a < end && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r'))
            a++;
        pos = end + 1;
        if (a == end)
            continue;
        sdi_jvalue v;
        sd_status s = sdi_json_parse(text + a, (long)(end - a), &v);
        if (s != SD_OK) {
            sdi_error_prefix("line %ld", line);
            sdi_free(ts);
            return s;
        }
        if (cnt == cap) {
            int nc = cap > 0 ? cap * 2 : 64;
            sdi_pcsr_task *nt = sdi_realloc_array(ts, (size_t)nc, sizeof *nt);
            if (nt == NULL) {
                sdi_jvalue_free(&v);
                sdi_free(ts);
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading PCSR tasks");
            }
            ts = nt;
            cap = nc;
        }
        cnt += line_task(&v, k_filter, &ts[cnt]);
        sdi_jvalue_free(&v);
    }
    *out = ts;
    *n = cnt;
    return SD_OK;
}

sd_status sdi_paramspmm_examples_read(const char *path, int k_filter, double **X,
                                      sdi_paramspmm_params **y, int **k, int *n)
{
    char *buf = NULL;
    sdi_pcsr_task *ts = NULL;
    double *xs = NULL;
    sdi_paramspmm_params *ys = NULL;
    int *kv = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(buf);                                                                     \
        sdi_free(ts);                                                                      \
        sdi_free(xs);                                                                      \
        sdi_free(ys);                                                                      \
        sdi_free(kv);                                                                      \
    } while (0)
    *X = NULL;
    *y = NULL;
    if (k != NULL)
        *k = NULL;
    *n = 0;
    size_t len = 0;
    int cnt = 0;
    SD_TRY(sdi_model_read_file(path, &buf, &len));
    sd_status s = sdi_pcsr_tasks_parse(buf, len, k_filter, &ts, &cnt);
    if (s != SD_OK) {
        sdi_error_prefix("%s", path);
        SD_FREE_ALL;
        return s;
    }
    size_t m = cnt > 0 ? (size_t)cnt : 1;
    xs = sdi_malloc_array(m * SDI_PSPMM_NFEAT, sizeof *xs);
    SD_CHECK_ALLOC(xs, "decider examples");
    ys = sdi_malloc_array(m, sizeof *ys);
    SD_CHECK_ALLOC(ys, "decider examples");
    if (k != NULL) {
        kv = sdi_malloc_array(m, sizeof *kv);
        SD_CHECK_ALLOC(kv, "decider examples");
    }
    for (int i = 0; i < cnt; i++) {
        memcpy(xs + (size_t)i * SDI_PSPMM_NFEAT, ts[i].x, sizeof ts[i].x);
        sdi_paramspmm_config_of(ts[i].best, &ys[i]);
        if (kv != NULL)
            kv[i] = ts[i].k;
    }
    sdi_free(buf);
    sdi_free(ts);
    *X = xs;
    *y = ys;
    if (k != NULL)
        *k = kv;
    *n = cnt;
    return SD_OK;
#undef SD_FREE_ALL
}
