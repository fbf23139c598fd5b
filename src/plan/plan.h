/* src/plan/plan.h: the parts of the compilation plan Π = ⟨R, S, θ_H⟩ shared by every
 * family: the static bounds of docs/ARCHITECTURE.md "Static bounds and legality"
 * (M_rep = M_value + M_meta, workspace W,
 * M_R = M_rep + W + D_R, M_T = M_R + D_S, q_R and q_T against the L2, work per SM).
 * The representation, schedule and θ_H of a plan are the family's configuration
 * (sdi_spmv_config, sdi_spmm_config, sdi_sg_schedule) and its lowering. */
#ifndef SDI_PLAN_H
#define SDI_PLAN_H

#include "../analysis/gpu.h"
#include "../core/core.h"

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
