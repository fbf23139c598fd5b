/* src/plan/plan_json.c: the JSON form of a plan (docs/ARCHITECTURE.md "JSON forms of a
 * plan"), its label, description and equality. The form is what reports print and what the
 * kernel cache stores: it reads back to the identical plan, and the reader refuses what it
 * cannot read as exactly that, naming the member. θ_H is the operator's configuration JSON
 * of src/plan/config_json.c, whose readers are exact; R's layout and S's decomposition and
 * dataflow are the family's, written for readers and checked on the way back. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "family.h"

#define SD_FREE_ALL ((void)0) /* nothing here owns memory across an SD_TRY */

static const char *const k_ops[] = {"spmv", "spmm", "spgemm"};
static const char *const k_row_orders[SDI_ROW_ORDER_COUNT] = {"natural"};
static const char *const k_col_renumbers[SDI_COL_RENUMBER_COUNT] = {"none"};
#define NOPS ((int)(sizeof k_ops / sizeof k_ops[0]))

static const char *op_name(int op)
{
    return op >= 0 && op < NOPS ? k_ops[op] : "unknown";
}

static int word_index(const char *const *words, int n, const char *w)
{
    for (int i = 0; w != NULL && i < n; i++)
        if (strcmp(words[i], w) == 0)
            return i;
    return -1;
}

/* The family's dataflow word for p ("-" when the family has no hook). */
static const char *dataflow_of(const sdi_family *f, const sdi_plan *p)
{
    const char *w = f->dataflow != NULL ? f->dataflow(p) : NULL;
    return w != NULL ? w : "-";
}

void sdi_plan_json(const sdi_plan *p, sdi_json *j)
{
    const sdi_family *f = sdi_plan_family(p);
    sdi_json_begin_object(j);
    sdi_json_key(j, "format");
    sdi_json_int(j, SDI_PLAN_JSON_FORMAT);
    sdi_json_key(j, "op");
    sdi_json_string(j, op_name(p->op));
    sdi_json_key(j, "k");
    sdi_json_int(j, p->k);
    sdi_json_key(j, "family");
    sdi_json_string(j, f != NULL ? f->name : "unknown");
    sdi_json_key(j, "R");
    sdi_json_begin_object(j);
    sdi_json_key(j, "layout");
    sdi_json_string(j, f != NULL ? f->layout : "unknown");
    sdi_json_key(j, "row_order");
    sdi_json_string(j, p->row_order >= 0 && p->row_order < SDI_ROW_ORDER_COUNT ? k_row_orders[p->row_order]
                                                                               : "unknown");
    sdi_json_key(j, "col_renumber");
    sdi_json_string(j, p->col_renumber >= 0 && p->col_renumber < SDI_COL_RENUMBER_COUNT
                           ? k_col_renumbers[p->col_renumber]
                           : "unknown");
    sdi_json_end_object(j);
    sdi_json_key(j, "S");
    sdi_json_begin_object(j);
    sdi_json_key(j, "decomposition");
    sdi_json_string(j, f != NULL ? f->decomposition : "unknown");
    sdi_json_key(j, "dataflow");
    sdi_json_string(j, f != NULL ? dataflow_of(f, p) : "unknown");
    sdi_json_end_object(j);
    sdi_json_key(j, "theta");
    switch (p->op) {
    case SD_OP_SPMV: sdi_spmv_config_json(&p->p.spmv, j); break;
    case SD_OP_SPMM: sdi_spmm_config_json(&p->p.spmm, j); break;
    case SD_OP_SPGEMM: sdi_spgemm_config_json(&p->p.spgemm, j); break;
    default: sdi_json_null(j); break;
    }
    sdi_json_end_object(j);
}

/* A string member of obj (what names its path in messages). */
static sd_status get_word(const sdi_jvalue *obj, const char *key, const char *path, const char **out)
{
    const sdi_jvalue *m = sdi_jget(obj, key);
    if (m == NULL || m->type != SDI_JSTRING)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member '%s' is missing or not a string", path);
    *out = m->string;
    return SD_OK;
}

static sd_status get_int(const sdi_jvalue *obj, const char *key, int32_t *out)
{
    const sdi_jvalue *m = sdi_jget(obj, key);
    if (m == NULL || m->type != SDI_JNUMBER)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member '%s' is missing or not a number", key);
    if (m->number != floor(m->number) || m->number < (double)INT32_MIN || m->number > (double)INT32_MAX)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member '%s' = %g is not a 32-bit integer", key, m->number);
    *out = (int32_t)m->number;
    return SD_OK;
}

static sd_status get_object(const sdi_jvalue *obj, const char *key, const sdi_jvalue **out)
{
    const sdi_jvalue *m = sdi_jget(obj, key);
    if (m == NULL || m->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member '%s' is missing or not an object", key);
    *out = m;
    return SD_OK;
}

/* A member that must hold the family's word. */
static sd_status expect_word(const sdi_jvalue *obj, const char *key, const char *path, const char *want,
                             const sdi_family *f)
{
    const char *w = NULL;
    SD_TRY(get_word(obj, key, path, &w));
    if (strcmp(w, want) != 0)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member '%s' is '%s', but %s.%s has '%s'", path, w,
                       op_name(f->op), f->name, want);
    return SD_OK;
}

/* The operator's configuration from "theta"; its family field must be the entry's id. */
static sd_status read_theta(const sdi_jvalue *theta, const sdi_family *f, sdi_plan *out)
{
    sd_status s;
    int32_t id;
    switch (out->op) {
    case SD_OP_SPMV:
        s = sdi_spmv_config_from_json(theta, &out->p.spmv);
        id = out->p.spmv.family;
        break;
    case SD_OP_SPMM:
        s = sdi_spmm_config_from_json(theta, &out->p.spmm);
        id = out->p.spmm.tmpl;
        break;
    default:
        s = sdi_spgemm_config_from_json(theta, &out->p.spgemm);
        id = out->p.spgemm.family;
        break;
    }
    if (s != SD_OK) {
        sdi_error_prefix("plan JSON: member 'theta'");
        return s;
    }
    if (id != f->id)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'theta' is a configuration of another family than %s.%s",
                       op_name(f->op), f->name);
    return SD_OK;
}

static sd_status plan_read(const sdi_jvalue *v, sdi_plan *out)
{
    if (v == NULL || v->type != SDI_JOBJECT)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: not a JSON object");
    int32_t format = 0;
    SD_TRY(get_int(v, "format", &format));
    if (format != SDI_PLAN_JSON_FORMAT)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'format' is %d; this build reads format %d", (int)format,
                       SDI_PLAN_JSON_FORMAT);
    const char *w = NULL;
    SD_TRY(get_word(v, "op", "op", &w));
    out->op = word_index(k_ops, NOPS, w);
    if (out->op < 0)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'op': unknown operator '%s'", w);
    SD_TRY(get_int(v, "k", &out->k));
    if (out->op == SD_OP_SPMM ? out->k < 1 : out->k != 1)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'k' = %d is not a width of %s", (int)out->k,
                       op_name(out->op));
    SD_TRY(get_word(v, "family", "family", &w));
    out->family = sdi_family_find(out->op, w);
    if (out->family < 0) {
        for (int op = 0; op < NOPS; op++)
            if (op != out->op && sdi_family_find(op, w) >= 0)
                return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'family': '%s' is a family of %s, not of %s", w,
                               op_name(op), op_name(out->op));
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'family': unknown %s family '%s'", op_name(out->op), w);
    }
    const sdi_family *f = sdi_family_at(out->family);

    const sdi_jvalue *r = NULL, *sch = NULL, *theta = NULL;
    SD_TRY(get_object(v, "R", &r));
    SD_TRY(expect_word(r, "layout", "R.layout", f->layout, f));
    SD_TRY(get_word(r, "row_order", "R.row_order", &w));
    out->row_order = word_index(k_row_orders, SDI_ROW_ORDER_COUNT, w);
    if (out->row_order < 0)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'R.row_order': unknown row order '%s'", w);
    SD_TRY(get_word(r, "col_renumber", "R.col_renumber", &w));
    out->col_renumber = word_index(k_col_renumbers, SDI_COL_RENUMBER_COUNT, w);
    if (out->col_renumber < 0)
        return SDI_ERR(SD_ERR_PARSE, "plan JSON: member 'R.col_renumber': unknown column renumbering '%s'", w);
    SD_TRY(get_object(v, "S", &sch));
    SD_TRY(expect_word(sch, "decomposition", "S.decomposition", f->decomposition, f));
    SD_TRY(get_object(v, "theta", &theta));
    SD_TRY(read_theta(theta, f, out));
    /* The dataflow follows from θ_H (the split mode of csr_split, …): checked once read. */
    SD_TRY(expect_word(sch, "dataflow", "S.dataflow", dataflow_of(f, out), f));
    return SD_OK;
}

sd_status sdi_plan_from_json(const sdi_jvalue *v, sdi_plan *out)
{
    memset(out, 0, sizeof *out);
    sd_status s = plan_read(v, out);
    if (s != SD_OK)
        memset(out, 0, sizeof *out);
    return s;
}

void sdi_plan_label(const sdi_plan *p, char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return;
    const sdi_family *f = sdi_plan_family(p);
    snprintf(buf, cap, "%s.%s", op_name(p->op), f != NULL ? f->name : "unknown");
}

/* The operator's one-line description, which begins with the family's label ("merge
 * b=256 ipt=7 rp32", "bsr4 k=32 …"); the label is put in front where it does not. */
void sdi_plan_describe(const sdi_plan *p, char *buf, size_t cap)
{
    if (buf == NULL || cap == 0)
        return;
    const sdi_family *f = sdi_plan_family(p);
    char line[SDI_PLAN_TEXT];
    line[0] = '\0';
    switch (p->op) {
    case SD_OP_SPMV: sdi_spmv_config_describe(&p->p.spmv, line, sizeof line); break;
    case SD_OP_SPMM: sdi_spmm_config_describe(&p->p.spmm, line, sizeof line); break;
    case SD_OP_SPGEMM: sdi_spgemm_config_describe(&p->p.spgemm, line, sizeof line); break;
    default: break;
    }
    const char *name = f != NULL ? f->name : "unknown";
    if (strncmp(line, name, strlen(name)) == 0)
        snprintf(buf, cap, "%s", line);
    else
        snprintf(buf, cap, "%s%s%s", name, line[0] ? " " : "", line);
}

/* The bytes of the operator's parameters (the rest of the union stays zero). */
static size_t params_size(int op)
{
    switch (op) {
    case SD_OP_SPMV: return sizeof(sdi_spmv_config);
    case SD_OP_SPMM: return sizeof(sdi_spmm_config);
    case SD_OP_SPGEMM: return sizeof(sdi_spgemm_config);
    default: return sizeof(((sdi_plan *)0)->p);
    }
}

bool sdi_plan_equal(const sdi_plan *a, const sdi_plan *b)
{
    return a->op == b->op && a->k == b->k && a->family == b->family && a->row_order == b->row_order &&
           a->col_renumber == b->col_renumber && memcmp(&a->p, &b->p, params_size(a->op)) == 0;
}
