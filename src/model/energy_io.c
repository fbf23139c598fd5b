/* src/model/energy_io.c: energy model weights as JSON. Format (version 2, or 3 for a
 * model with SpMM K heads):
 *   {"format": "sparseditto-energy", "version": 2 | 3, "model": "energy-v1", "hidden": H,
 *    "ensemble": M (members, 1..16),
 *    "spmm_k_heads": [8, 32, 128, 256] (version 3 only; absent = one head per operator:
 *               the K buckets of SpMM's heads, energy.h),
 *    "inputs": [45 input names in order: the 36 canonical features, shape one-hots,
 *               operator one-hots, "log2_k"],
 *    "size_features": [names log1p-ed before standardisation],
 *    "vocabulary": {"spmv": [...], "spmm": [...], "spgemm": [...]},
 *    "standardization": {"mean": [36], "std": [36], "log2k_mean": m, "log2k_std": s},
 *    "training": {"seed": "decimal", "epochs": n, "lambda": [3], "temperature": T,
 *                 "lr": x, "weight_decay": x, "batch": n, "cosine": b (informational,
 *                 optional), "trained_ops": ["spmv", ...] (optional: absent = every
 *                 operator)},
 *    "members": [M × {"w1": [45·H], "b1": [45·H], "w2": [R·45·H], "beta": [R]}]}
 * with R the rows (head, template): Σ|V_o|, plus 3·|V_spmm| with K heads.
 * Version 1 (still read): no "ensemble" / "members"; one member's w1, b1, w2, beta at
 * the top level. Version 2 is still written for models without K heads, so that
 * libraries that read 1..2 keep loading them; a K-heads file is refused by those by
 * its version. Index orders as in energy.h. Numbers are written with 17 significant digits, so the
 * weights read back bit-exactly. Loading checks every name, size and number against
 * this library's feature table and vocabulary: a model is only used for the inputs it
 * was trained on. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy.h"

#define NIN SDI_EM_NIN

static void num(sdi_json *j, double v)
{
    char b[40];
    snprintf(b, sizeof b, "%.17g", v);
    sdi_json_raw(j, b);
}

static void num_array(sdi_json *j, const char *key, const double *v, long n)
{
    sdi_json_key(j, key);
    sdi_json_begin_array(j);
    for (long i = 0; i < n; i++)
        num(j, v[i]);
    sdi_json_end_array(j);
}

sd_status sdi_energy_to_json(const sdi_energy_model *m, sdi_json *j)
{
    for (long i = 0; i < m->nparams * m->members; i++)
        if (!isfinite(m->theta[i]))
            return SDI_ERR(SD_ERR_INVALID_ARG, "energy model: parameter %ld of member %ld is not "
                           "finite", i % m->nparams, i / m->nparams);
    long nh = (long)NIN * m->hidden;
    sdi_json_begin_object(j);
    sdi_json_key(j, "format");
    sdi_json_string(j, "sparseditto-energy");
    sdi_json_key(j, "version");
    sdi_json_int(j, m->k_heads ? 3 : 2);
    sdi_json_key(j, "model");
    sdi_json_string(j, "energy-v1");
    sdi_json_key(j, "hidden");
    sdi_json_int(j, m->hidden);
    sdi_json_key(j, "ensemble");
    sdi_json_int(j, m->members);
    if (m->k_heads) {
        sdi_json_key(j, "spmm_k_heads");
        sdi_json_begin_array(j);
        for (int b = 0; b < SDI_EM_NKB; b++)
            sdi_json_int(j, sdi_energy_k_bucket_value(b));
        sdi_json_end_array(j);
    }
    sdi_json_key(j, "inputs");
    sdi_json_begin_array(j);
    for (int i = 0; i < NIN; i++)
        sdi_json_string(j, sdi_energy_input_name(i));
    sdi_json_end_array(j);
    sdi_json_key(j, "size_features");
    sdi_json_begin_array(j);
    for (int i = 0; i < SDI_EM_NFEAT; i++)
        if (sdi_energy_is_size_feature(i))
            sdi_json_string(j, sdi_energy_input_name(i));
    sdi_json_end_array(j);
    sdi_json_key(j, "vocabulary");
    sdi_json_begin_object(j);
    for (int o = 0; o < SDI_EM_NOP; o++) {
        int nv = 0;
        const char *const *v = sdi_vocabulary((sd_op)o, &nv);
        sdi_json_key(j, sdi_op_name((sd_op)o));
        sdi_json_begin_array(j);
        for (int s = 0; s < nv; s++)
            sdi_json_string(j, v[s]);
        sdi_json_end_array(j);
    }
    sdi_json_end_object(j);
    sdi_json_key(j, "standardization");
    sdi_json_begin_object(j);
    num_array(j, "mean", m->mean, SDI_EM_NFEAT);
    num_array(j, "std", m->std, SDI_EM_NFEAT);
    sdi_json_key(j, "log2k_mean");
    num(j, m->log2k_mean);
    sdi_json_key(j, "log2k_std");
    num(j, m->log2k_std);
    sdi_json_end_object(j);
    sdi_json_key(j, "training");
    sdi_json_begin_object(j);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", m->seed);
    sdi_json_key(j, "seed");
    sdi_json_string(j, seed);
    sdi_json_key(j, "epochs");
    sdi_json_int(j, m->epochs);
    num_array(j, "lambda", m->lambda, SDI_EM_NOP);
    sdi_json_key(j, "temperature");
    num(j, m->temperature);
    sdi_json_key(j, "lr");
    num(j, m->lr);
    sdi_json_key(j, "weight_decay");
    num(j, m->weight_decay);
    sdi_json_key(j, "batch");
    sdi_json_int(j, m->batch);
    sdi_json_key(j, "cosine");
    sdi_json_bool(j, m->cosine != 0);
    sdi_json_key(j, "trained_ops");
    sdi_json_begin_array(j);
    for (int o = 0; o < SDI_EM_NOP; o++)
        if (m->trained_ops & (1u << o))
            sdi_json_string(j, sdi_op_name((sd_op)o));
    sdi_json_end_array(j);
    sdi_json_end_object(j);
    sdi_json_key(j, "members");
    sdi_json_begin_array(j);
    for (int i = 0; i < m->members; i++) {
        const double *w1 = m->theta + (long)i * m->nparams, *b1 = w1 + nh, *w2 = b1 + nh;
        sdi_json_begin_object(j);
        num_array(j, "w1", w1, nh);
        num_array(j, "b1", b1, nh);
        num_array(j, "w2", w2, (long)m->nrows * nh);
        num_array(j, "beta", w2 + (long)m->nrows * nh, m->nrows);
        sdi_json_end_object(j);
    }
    sdi_json_end_array(j);
    sdi_json_end_object(j);
    return SD_OK;
}

/* Reads an array of exactly n finite numbers named key (in object v, or v itself when
 * key is NULL) into out. */
static sd_status read_array(const sdi_jvalue *v, const char *key, const char *where, double *out,
                            long n)
{
    const sdi_jvalue *a = key != NULL ? sdi_jget(v, key) : v;
    if (a == NULL || a->type != SDI_JARRAY)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"%s\" missing or not an array", where);
    if (a->n != n)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"%s\" has %d values, expected %ld", where,
                       a->n, n);
    for (long i = 0; i < n; i++) {
        const sdi_jvalue *x = &a->items[i];
        if (x->type != SDI_JNUMBER || !isfinite(x->number))
            return SDI_ERR(SD_ERR_PARSE, "energy model: %s[%ld] is not a finite number", where, i);
        out[i] = x->number;
    }
    return SD_OK;
}

/* Checks that array key of v lists exactly the n names produced by name(i). */
static sd_status check_names(const sdi_jvalue *a, const char *where, int n,
                             const char *(*name)(int), const char *const *list)
{
    if (a == NULL || a->type != SDI_JARRAY)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"%s\" missing or not an array", where);
    if (a->n != n)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"%s\" lists %d names, this library has %d",
                       where, a->n, n);
    for (int i = 0; i < n; i++) {
        const char *want = name != NULL ? name(i) : list[i];
        if (a->items[i].type != SDI_JSTRING || strcmp(a->items[i].string, want) != 0)
            return SDI_ERR(SD_ERR_PARSE, "energy model: %s[%d] is \"%s\", this library has \"%s\" "
                           "(trained on other inputs)", where, i,
                           a->items[i].type == SDI_JSTRING ? a->items[i].string : "?", want);
    }
    return SD_OK;
}

/* The head layout: "spmm_k_heads" present (version 3 only) = SpMM K heads, and it must
 * list exactly this library's K buckets. */
static sd_status read_k_heads(const sdi_jvalue *v, double ver, int *k_heads)
{
    const sdi_jvalue *a = sdi_jget(v, "spmm_k_heads");
    *k_heads = 0;
    if (a == NULL)
        return SD_OK;
    if (ver < 3)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"spmm_k_heads\" in a format version %g "
                       "file (K heads need version 3)", ver);
    int ok = a->type == SDI_JARRAY && a->n == SDI_EM_NKB;
    for (int b = 0; ok && b < SDI_EM_NKB; b++)
        ok = a->items[b].type == SDI_JNUMBER &&
             a->items[b].number == sdi_energy_k_bucket_value(b);
    if (!ok)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"spmm_k_heads\" is not [8, 32, 128, 256], "
                       "the K buckets of this library's SpMM heads (another head layout)");
    *k_heads = 1;
    return SD_OK;
}

sd_status sdi_energy_from_json(const sdi_jvalue *v, sdi_energy_model *m)
{
#define SD_FREE_ALL sdi_energy_model_free(m)
    memset(m, 0, sizeof *m);
    if (v->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "energy model: not a JSON object");
    const char *fmt = sdi_jget_string(v, "format", NULL);
    if (fmt == NULL || strcmp(fmt, "sparseditto-energy") != 0)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"format\" is not \"sparseditto-energy\"");
    double ver = sdi_jget_number(v, "version", -1);
    if (ver != 1 && ver != 2 && ver != SDI_EM_FORMAT_VERSION)
        return SDI_ERR(SD_ERR_PARSE, "energy model: format version %g, this library reads 1..%d",
                       ver, SDI_EM_FORMAT_VERSION);
    double hid = sdi_jget_number(v, "hidden", -1);
    if (!(hid >= 1 && hid <= 64 && hid == floor(hid)))
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"hidden\" missing or not an integer in 1..64");
    /* Version 2 names its member count and lists the members; version 1 is one model. */
    const sdi_jvalue *mem = NULL;
    double nmem = 1;
    if (ver >= 2) {
        nmem = sdi_jget_number(v, "ensemble", -1);
        if (!(nmem >= 1 && nmem <= SDI_EM_MAX_MEMBERS && nmem == floor(nmem)))
            return SDI_ERR(SD_ERR_PARSE, "energy model: \"ensemble\" missing or not an integer "
                           "in 1..%d", SDI_EM_MAX_MEMBERS);
        mem = sdi_jget(v, "members");
        if (mem == NULL || mem->type != SDI_JARRAY)
            return SDI_ERR(SD_ERR_PARSE, "energy model: \"members\" missing or not an array");
        if (mem->n != (int)nmem)
            return SDI_ERR(SD_ERR_PARSE, "energy model: \"members\" has %d entries, \"ensemble\" "
                           "says %d", mem->n, (int)nmem);
    }
    int k_heads = 0;
    SD_TRY(read_k_heads(v, ver, &k_heads));
    SD_TRY(check_names(sdi_jget(v, "inputs"), "inputs", NIN, sdi_energy_input_name, NULL));
    const char *sizes[SDI_EM_NFEAT];
    int nsz = 0;
    for (int i = 0; i < SDI_EM_NFEAT; i++)
        if (sdi_energy_is_size_feature(i))
            sizes[nsz++] = sdi_energy_input_name(i);
    SD_TRY(check_names(sdi_jget(v, "size_features"), "size_features", nsz, NULL, sizes));
    const sdi_jvalue *voc = sdi_jget(v, "vocabulary");
    if (voc == NULL || voc->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"vocabulary\" missing or not an object");
    for (int o = 0; o < SDI_EM_NOP; o++) {
        int nv = 0;
        const char *const *lab = sdi_vocabulary((sd_op)o, &nv);
        char where[32];
        snprintf(where, sizeof where, "vocabulary.%s", sdi_op_name((sd_op)o));
        SD_TRY(check_names(sdi_jget(voc, sdi_op_name((sd_op)o)), where, nv, NULL, lab));
    }
    SD_TRY(sdi_energy_model_alloc_layout(m, (int)hid, (int)nmem, k_heads));
    const sdi_jvalue *st = sdi_jget(v, "standardization");
    if (st == NULL || st->type != SDI_JOBJECT) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_PARSE, "energy model: \"standardization\" missing");
    }
    SD_TRY(read_array(st, "mean", "standardization.mean", m->mean, SDI_EM_NFEAT));
    SD_TRY(read_array(st, "std", "standardization.std", m->std, SDI_EM_NFEAT));
    m->log2k_mean = sdi_jget_number(st, "log2k_mean", NAN);
    m->log2k_std = sdi_jget_number(st, "log2k_std", NAN);
    if (!isfinite(m->log2k_mean) || !(m->log2k_std > 0) || !isfinite(m->log2k_std)) {
        SD_FREE_ALL;
        return SDI_ERR(SD_ERR_PARSE, "energy model: standardization.log2k_mean / log2k_std "
                                     "missing or invalid");
    }
    for (int i = 0; i < SDI_EM_NFEAT; i++)
        if (!(m->std[i] > 0)) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_PARSE, "energy model: standardization.std[%d] (%s) is not > 0",
                           i, sdi_energy_input_name(i));
        }
    const sdi_jvalue *tr = sdi_jget(v, "training");
    if (tr != NULL && tr->type == SDI_JOBJECT) {
        const char *seed = sdi_jget_string(tr, "seed", "0");
        m->seed = strtoull(seed, NULL, 10);
        m->epochs = (int)sdi_jget_number(tr, "epochs", 0);
        m->temperature = sdi_jget_number(tr, "temperature", m->temperature);
        m->lr = sdi_jget_number(tr, "lr", 0);
        m->weight_decay = sdi_jget_number(tr, "weight_decay", 0);
        m->batch = (int)sdi_jget_number(tr, "batch", 0);
        const sdi_jvalue *cs = sdi_jget(tr, "cosine");
        m->cosine = cs != NULL && cs->type == SDI_JBOOL && cs->boolean;
        if (sdi_jget(tr, "lambda") != NULL)
            SD_TRY(read_array(tr, "lambda", "training.lambda", m->lambda, SDI_EM_NOP));
        const sdi_jvalue *ops = sdi_jget(tr, "trained_ops");
        if (ops != NULL) {
            if (ops->type != SDI_JARRAY) {
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_PARSE, "energy model: training.trained_ops is not an array");
            }
            m->trained_ops = 0;
            for (int i = 0; i < ops->n; i++) {
                int o = ops->items[i].type == SDI_JSTRING ? sdi_op_from_name(ops->items[i].string) : -1;
                if (o < 0) {
                    SD_FREE_ALL;
                    return SDI_ERR(SD_ERR_PARSE, "energy model: training.trained_ops[%d] is not "
                                   "spmv, spmm or spgemm", i);
                }
                m->trained_ops |= 1u << o;
            }
        }
    }
    long nh = (long)NIN * m->hidden;
    for (int i = 0; i < m->members; i++) {
        const sdi_jvalue *b = mem != NULL ? &mem->items[i] : v;
        if (b->type != SDI_JOBJECT) {
            SD_FREE_ALL;
            return SDI_ERR(SD_ERR_PARSE, "energy model: members[%d] is not an object", i);
        }
        char where[4][32];
        const char *names[4] = {"w1", "b1", "w2", "beta"};
        for (int k = 0; k < 4; k++)
            if (mem != NULL)
                snprintf(where[k], sizeof where[k], "members[%d].%s", i, names[k]);
            else
                snprintf(where[k], sizeof where[k], "%s", names[k]);
        double *w1 = m->theta + (long)i * m->nparams, *b1 = w1 + nh, *w2 = b1 + nh;
        SD_TRY(read_array(b, "w1", where[0], w1, nh));
        SD_TRY(read_array(b, "b1", where[1], b1, nh));
        /* The head layout decides the sizes of w2 and beta: a size mismatch names it. */
        for (int k = 2; k < 4; k++) {
            const sdi_jvalue *a = sdi_jget(b, names[k]);
            long want = (k == 2 ? nh : 1) * (long)m->nrows;
            if (a != NULL && a->type == SDI_JARRAY && a->n != want) {
                int rows = m->nrows, kh = m->k_heads; /* m is zeroed by SD_FREE_ALL */
                SD_FREE_ALL;
                return SDI_ERR(SD_ERR_PARSE, "energy model: \"%s\" has %d values, expected %ld "
                               "(%d head rows: %s)", where[k], a->n, want, rows,
                               kh ? "spmm_k_heads [8, 32, 128, 256]"
                                  : "one head per operator, no spmm_k_heads");
            }
        }
        SD_TRY(read_array(b, "w2", where[2], w2, (long)m->nrows * nh));
        SD_TRY(read_array(b, "beta", where[3], w2 + (long)m->nrows * nh, m->nrows));
    }
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_energy_load(const char *path, sdi_energy_model *m)
{
    memset(m, 0, sizeof *m);
    char *buf = NULL;
    size_t len = 0;
    sd_status s = sdi_model_read_file(path, &buf, &len);
    if (s != SD_OK)
        return s;
    sdi_jvalue v;
    s = sdi_json_parse(buf, (long)len, &v);
    sdi_free(buf);
    if (s == SD_ERR_PARSE)
        sdi_error_prefix("energy model: not valid JSON (truncated?)");
    if (s == SD_OK) {
        s = sdi_energy_from_json(&v, m);
        sdi_jvalue_free(&v);
    }
    if (s != SD_OK)
        sdi_error_prefix("%s", path);
    return s;
}
