/* src/plan/plan.h: the compilation plan Π = ⟨R, S, θ_H⟩ of every operator (docs/ARCHITECTURE.md
 * "The plan"): the operator, the family (an entry of the family table, src/plan/family.h,
 * which fixes the representation's layout and the decomposition), the locality part of R
 * (row order, column renumbering), and the family's parameters — index widths, dataflow,
 * accumulators and θ_H — in the operator's parameter struct. A plan fully determines the
 * generated code and the preprocessing; its JSON form (sdi_plan_json) is what reports print
 * and the kernel cache stores, and reads back to the identical plan. Also the static
 * bounds of "Static bounds and legality" (M_rep = M_value + M_meta, workspace W,
 * M_R = M_rep + W + D_R, M_T = M_R + D_S, q_R and q_T against the L2, work per SM). */
#ifndef SDI_PLAN_H
#define SDI_PLAN_H

#include "../analysis/gpu.h"
#include "../core/core.h"
#include "../core/json_parse.h"
#include "spgemm.h"
#include "spmm.h"
#include "spmv.h"

/* R, locality: the order the rows are processed in and the renumbering of the columns.
 * Natural / none are the only values today; a value that reorders is a new enumerator,
 * its JSON word, and the format builders' permutation. */
typedef enum { SDI_ROW_ORDER_NATURAL = 0, SDI_ROW_ORDER_COUNT } sdi_row_order;
typedef enum { SDI_COL_RENUMBER_NONE = 0, SDI_COL_RENUMBER_COUNT } sdi_col_renumber;

/* One plan. memset to zero before filling (plans are compared and hashed bytewise); the
 * members of `p` other than the operator's stay zero. */
typedef struct sdi_plan {
    int32_t op;           /* sd_op */
    int32_t k;            /* SpMM: dense width K; 1 otherwise */
    int32_t family;       /* index into the family table (sdi_family_at) */
    int32_t row_order;    /* sdi_row_order */
    int32_t col_renumber; /* sdi_col_renumber */
    /* The family's parameters: representation details (index widths, block and slice
     * sizes), schedule (dataflow, accumulators, phases) and θ_H. The struct's family /
     * template field agrees with the table entry's id. */
    union {
        sdi_spmv_config spmv;
        sdi_spmm_config spmm;
        sdi_spgemm_config spgemm;
    } p;
} sdi_plan;

/* Plan JSON (src/plan/plan_json.c):
 *   {"format":1,"op":"spmm","k":32,"family":"csr_split",
 *    "R":{"layout":"csr","row_order":"natural","col_renumber":"none"},
 *    "S":{"decomposition":"nonzero_split","dataflow":"fixup"},
 *    "theta":{…the operator's parameters, every field…}}
 * R's layout and S are the family's (written for readers; read back and checked against
 * the family); every other member is the plan's. */
#define SDI_PLAN_JSON_FORMAT 1
SDI_HIDDEN void sdi_plan_json(const sdi_plan *p, sdi_json *j);
/* Reads what sdi_plan_json wrote into the identical plan. SD_ERR_PARSE names the member
 * that is missing, unknown or inconsistent (a family of another operator, a layout the
 * family does not have, a format number this build does not read). */
SDI_HIDDEN sd_status sdi_plan_from_json(const sdi_jvalue *v, sdi_plan *out);
/* The plan's label "<op>.<family>" ("spmv.merge") and its one-line description
 * ("merge b=256 ipt=7 rp32"); buffers of SDI_PLAN_TEXT hold any. */
#define SDI_PLAN_TEXT 448
SDI_HIDDEN void sdi_plan_label(const sdi_plan *p, char *buf, size_t cap);
SDI_HIDDEN void sdi_plan_describe(const sdi_plan *p, char *buf, size_t cap);
/* Whether two plans are the same plan (bytewise over the operator's parameters). */
SDI_HIDDEN bool sdi_plan_equal(const sdi_plan *a, const sdi_plan *b);

typedef struct {
    int64_t m_value, m_meta, workspace; /* device bytes of the representation */
    int64_t d_read, d_write;            /* dense operand bytes read (x, B) and written (y, C) */
    int64_t m_rep, m_r, m_t;
    double q_r, q_t;    /* M_R / L2, M_T / L2 */
    double work_per_sm; /* nonzeros per SM */
} sdi_plan_bounds;

SDI_HIDDEN void sdi_plan_bounds_compute(int64_t m_value, int64_t m_meta, int64_t workspace,
                                        sd_op op, int k, int32_t rows, int32_t cols,
                                        int64_t nnz, const sdi_gpu_props *gpu,
                                        sdi_plan_bounds *out);
SDI_HIDDEN void sdi_plan_bounds_json(const sdi_plan_bounds *b, sdi_json *j);

#endif /* SDI_PLAN_H */
