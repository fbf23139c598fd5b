/* src/plan/families.c: the family table (docs/ARCHITECTURE.md "Families"): every family of
 * every operator, one entry each, defined in its own file under src/plan/families/. The
 * order is that of the operators' family enums (SpMV, then SpMM, then SpGEMM), so a
 * family's index is its id plus its operator's offset; ties of the ranking fall to table
 * order. Also the plan list and the calls that reach a plan's family: defaults, legality
 * and lowering. */
#include <string.h>

#include "family.h"

#define SD_FREE_ALL ((void)0) /* nothing here owns memory across an SD_TRY */

SDI_HIDDEN extern const sdi_family sdi_family_spmv_csr_vec, sdi_family_spmv_csr_adaptive,
    sdi_family_spmv_merge, sdi_family_spmv_tiny, sdi_family_spmv_sell, sdi_family_spmv_ell,
    sdi_family_spmv_bsr, sdi_family_spmv_tiles16, sdi_family_spmv_coo, sdi_family_spmv_dia;
SDI_HIDDEN extern const sdi_family sdi_family_spmm_csr_row, sdi_family_spmm_csr_split,
    sdi_family_spmm_csr_window, sdi_family_spmm_bsr, sdi_family_spmm_bell, sdi_family_spmm_pcsr,
    sdi_family_spmm_col_window, sdi_family_spmm_bsr_tc;
SDI_HIDDEN extern const sdi_family sdi_family_spgemm_csr_hash, sdi_family_spgemm_smem_tiled_hash,
    sdi_family_spgemm_hybrid, sdi_family_spgemm_dense_stripe;

static const sdi_family *const k_table[] = {
    /* SpMV */
    &sdi_family_spmv_csr_vec,
    &sdi_family_spmv_csr_adaptive,
    &sdi_family_spmv_merge,
    &sdi_family_spmv_tiny,
    &sdi_family_spmv_sell,
    &sdi_family_spmv_ell,
    &sdi_family_spmv_bsr,
    &sdi_family_spmv_tiles16,
    &sdi_family_spmv_coo,
    &sdi_family_spmv_dia,
    /* SpMM */
    &sdi_family_spmm_csr_row,
    &sdi_family_spmm_csr_split,
    &sdi_family_spmm_csr_window,
    &sdi_family_spmm_bsr,
    &sdi_family_spmm_bell,
    &sdi_family_spmm_pcsr,
    &sdi_family_spmm_col_window,
    &sdi_family_spmm_bsr_tc,
    /* SpGEMM */
    &sdi_family_spgemm_csr_hash,
    &sdi_family_spgemm_smem_tiled_hash,
    &sdi_family_spgemm_hybrid,
    &sdi_family_spgemm_dense_stripe,
};
#define NTABLE ((int)(sizeof k_table / sizeof k_table[0]))

int sdi_family_count(void)
{
    return NTABLE;
}

const sdi_family *sdi_family_at(int index)
{
    return index >= 0 && index < NTABLE ? k_table[index] : NULL;
}

int sdi_family_find(int op, const char *name)
{
    for (int i = 0; name != NULL && i < NTABLE; i++)
        if (k_table[i]->op == op && strcmp(k_table[i]->name, name) == 0)
            return i;
    return -1;
}

int sdi_family_of(int op, int id)
{
    for (int i = 0; i < NTABLE; i++)
        if (k_table[i]->op == op && k_table[i]->id == id)
            return i;
    return -1;
}

const sdi_family *sdi_plan_family(const sdi_plan *p)
{
    return p != NULL ? sdi_family_at(p->family) : NULL;
}

/* ------------------------------------------------------------------ plan lists */
sd_status sdi_plan_list_push(sdi_plan_list *l, const sdi_plan *p)
{
    if (l->n == l->cap) {
        int cap = l->cap > 0 ? 2 * l->cap : 16;
        sdi_plan *v = sdi_realloc_array(l->v, (size_t)cap, sizeof *v);
        if (v == NULL)
            return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for a list of %d plans", cap);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *p;
    return SD_OK;
}

void sdi_plan_list_free(sdi_plan_list *l)
{
    sdi_free(l->v);
    memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------------------ through the family */
/* The operator's family / template field of p. */
static int32_t plan_id(const sdi_plan *p)
{
    switch (p->op) {
    case SD_OP_SPMV: return p->p.spmv.family;
    case SD_OP_SPMM: return p->p.spmm.tmpl;
    default: return p->p.spgemm.family;
    }
}

sd_status sdi_plan_default(const sdi_task *t, int index, sdi_plan *out)
{
    memset(out, 0, sizeof *out);
    const sdi_family *f = sdi_family_at(index);
    if (f == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "plan: no family %d (the table has %d)", index, NTABLE);
    if (f->op != t->op)
        return SDI_ERR(SD_ERR_INVALID_ARG, "plan: family %s is not one of the task's operator", f->name);
    sd_status s = f->defaults(t, out);
    if (s != SD_OK) {
        memset(out, 0, sizeof *out);
        return s;
    }
    out->op = f->op;
    out->k = t->op == SD_OP_SPMM ? t->k : 1;
    out->family = index;
    return SD_OK;
}

sd_status sdi_plan_check(const sdi_task *t, const sdi_plan *p)
{
    const sdi_family *f = sdi_plan_family(p);
    if (f == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "plan: no family %d (the table has %d)", (int)p->family, NTABLE);
    if (p->op != f->op || p->op != t->op)
        return SDI_ERR(SD_ERR_INVALID_ARG, "plan: a plan of %s for a task of another operator", f->name);
    if (plan_id(p) != f->id)
        return SDI_ERR(SD_ERR_INVALID_ARG, "plan: its parameters are of another family than %s", f->name);
    if (p->row_order != SDI_ROW_ORDER_NATURAL || p->col_renumber != SDI_COL_RENUMBER_NONE)
        return SDI_ERR(SD_ERR_UNSUPPORTED, "plan: row order %d / column renumbering %d: only the natural "
                       "order without renumbering is built", (int)p->row_order, (int)p->col_renumber);
    return f->check(t, p);
}

sd_status sdi_plan_lower(const sdi_task *t, const sdi_plan *p, sdi_lowered *out)
{
    memset(out, 0, sizeof *out);
    SD_TRY(sdi_plan_check(t, p));
    return sdi_plan_family(p)->lower(t, p, out);
}
