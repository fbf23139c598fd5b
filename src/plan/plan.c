/* src/plan/plan.c: static bounds of a plan (docs/ARCHITECTURE.md "Static bounds and legality"). */
#include <string.h>

#include "plan.h"

void sdi_plan_bounds_compute(int64_t m_value, int64_t m_meta, int64_t workspace, sd_op op,
                             int k, int32_t rows, int32_t cols, int64_t nnz,
                             const sdi_gpu_props *gpu, sdi_plan_bounds *out)
{
    memset(out, 0, sizeof *out);
    int width = op == SD_OP_SPMM ? (k > 0 ? k : 1) : 1;
    out->m_value = m_value;
    out->m_meta = m_meta;
    out->workspace = workspace;
    if (op != SD_OP_SPGEMM) {
        out->d_read = (int64_t)cols * width * 4;
        out->d_write = (int64_t)rows * width * 4;
    }
    out->m_rep = m_value + m_meta;
    out->m_r = out->m_rep + workspace + out->d_read;
    out->m_t = out->m_r + out->d_write;
    if (gpu != NULL && gpu->l2_bytes > 0) {
        out->q_r = (double)out->m_r / (double)gpu->l2_bytes;
        out->q_t = (double)out->m_t / (double)gpu->l2_bytes;
    }
    if (gpu != NULL && gpu->sm_count > 0)
        out->work_per_sm = (double)nnz / gpu->sm_count;
}

void sdi_plan_bounds_json(const sdi_plan_bounds *b, sdi_json *j)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "M_value");
    sdi_json_int(j, b->m_value);
    sdi_json_key(j, "M_meta");
    sdi_json_int(j, b->m_meta);
    sdi_json_key(j, "M_rep");
    sdi_json_int(j, b->m_rep);
    sdi_json_key(j, "W");
    sdi_json_int(j, b->workspace);
    sdi_json_key(j, "D_R");
    sdi_json_int(j, b->d_read);
    sdi_json_key(j, "D_S");
    sdi_json_int(j, b->d_write);
    sdi_json_key(j, "M_R");
    sdi_json_int(j, b->m_r);
    sdi_json_key(j, "M_T");
    sdi_json_int(j, b->m_t);
    sdi_json_key(j, "q_R");
    sdi_json_number(j, b->q_r);
    sdi_json_key(j, "q_T");
    sdi_json_number(j, b->q_t);
    sdi_json_key(j, "work_per_sm");
    sdi_json_number(j, b->work_per_sm);
    sdi_json_end_object(j);
}
