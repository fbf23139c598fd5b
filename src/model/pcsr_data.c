/* src/model/pcsr_data.c: ParamSpMM decider training data from a measured corpus: the
 * "pcsr" member of the corpus builder's spmm lines (src/tune/corpus_build.h) gives
 * ParamSpMM's 18 features and every PCSR configuration measured; an example is the
 * features with the fastest configuration of ParamSpMM's own space (32 threads per PCSR
 * row, W, F, V, S in their value sets). */
#include <math.h>
#include <string.h>

#include "../core/json_parse.h"
#include "corpus.h"
#include "forest.h"

static int in_set(int param, int v)
{
    int n = 0;
    const int *vals = sdi_paramspmm_values(param, &n);
    for (int i = 0; i < n; i++)
        if (vals[i] == v)
            return 1;
    return 0;
}

/* The example of one line; 0 when it has none. */
static int line_example(const sdi_jvalue *v, int k_filter, double *x, sdi_paramspmm_params *y)
{
    if (sdi_jget(v, "error") != NULL || sdi_op_from_name(sdi_jget_string(v, "op", NULL)) != SD_OP_SPMM)
        return 0;
    if (k_filter > 0 && sdi_jget_number(v, "k", 0) != k_filter)
        return 0;
    const sdi_jvalue *p = sdi_jget(v, "pcsr");
    const sdi_jvalue *f = p != NULL ? sdi_jget(p, "features") : NULL;
    const sdi_jvalue *cf = p != NULL ? sdi_jget(p, "configs") : NULL;
    if (f == NULL || f->type != SDI_JARRAY || f->n != SDI_PSPMM_NFEAT || cf == NULL ||
        cf->type != SDI_JARRAY)
        return 0;
    for (int i = 0; i < SDI_PSPMM_NFEAT; i++) {
        if (f->items[i].type != SDI_JNUMBER || !isfinite(f->items[i].number))
            return 0;
        x[i] = f->items[i].number;
    }
    double best = INFINITY;
    for (int i = 0; i < cf->n; i++) {
        const sdi_jvalue *c = &cf->items[i];
        double us = sdi_jget_number(c, "us", NAN), group = sdi_jget_number(c, "group", 32);
        sdi_paramspmm_params q = {(int)sdi_jget_number(c, "w", -1), (int)sdi_jget_number(c, "f", -1),
                                  (int)sdi_jget_number(c, "v", -1), (int)sdi_jget_number(c, "s", -1)};
        if (!(us > 0) || !isfinite(us) || (group != 32 && group != 0) || !in_set(0, q.w) ||
            !in_set(1, q.f) || !in_set(2, q.v) || !in_set(3, q.s))
            continue;
        if (us < best) {
            best = us;
            *y = q;
        }
    }
    return isfinite(best);
}

sd_status sdi_paramspmm_examples_read(const char *path, int k_filter, double **X,
                                      sdi_paramspmm_params **y, int *n)
{
    char *buf = NULL;
    double *xs = NULL;
    sdi_paramspmm_params *ys = NULL;
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(buf);                                                                     \
        sdi_free(xs);                                                                      \
        sdi_free(ys);                                                                      \
    } while (0)
    *X = NULL;
    *y = NULL;
    *n = 0;
    size_t len = 0;
    SD_TRY(sdi_model_read_file(path, &buf, &len));
    int cap = 0, cnt = 0;
    long line = 0;
    for (size_t pos = 0; pos < len;) {
        line++;
        size_t end = pos;
        while (end < len && buf[end] != '\n')
            end++;
        size_t a = pos;
        while (a < end && (buf[a] == ' ' || buf[a] == '\t' || buf[a] == '\r'))
            a++;
        pos = end + 1;
        if (a == end)
            continue;
        sdi_jvalue v;
        sd_status s = sdi_json_parse(buf + a, (long)(end - a), &v);
        if (s != SD_OK) {
            sdi_error_prefix("%s: line %ld", path, line);
            SD_FREE_ALL;
            return s;
        }
        double x[SDI_PSPMM_NFEAT];
        sdi_paramspmm_params q;
        int got = line_example(&v, k_filter, x, &q);
        sdi_jvalue_free(&v);
        if (!got)
            continue;
        if (cnt == cap) {
            cap = cap > 0 ? cap * 2 : 64;
            double *nx = sdi_realloc_array(xs, (size_t)cap * SDI_PSPMM_NFEAT, sizeof *nx);
            if (nx != NULL)
                xs = nx;
            sdi_paramspmm_params *ny = sdi_realloc_array(ys, (size_t)cap, sizeof *ny);
            if (ny != NULL)
                ys = ny;
            if (nx == NULL || ny == NULL) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory reading decider examples");
            }
        }
        memcpy(xs + (size_t)cnt * SDI_PSPMM_NFEAT, x, sizeof x);
        ys[cnt++] = q;
    }
    sdi_free(buf);
    *X = xs;
    *y = ys;
    *n = cnt;
    return SD_OK;
#undef SD_FREE_ALL
}
