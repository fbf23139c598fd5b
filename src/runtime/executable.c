/* src/runtime/executable.c: running a compiled kernel (runtime/executable.h): its calls,
 * new values, its bytes and its release. Compiles nothing and allocates nothing per call:
 * this file and what it calls are the execution path, which links without the JIT. */
#include <string.h>

#include "device_memory.h"
#include "executable.h"

sd_status sdi_exe_run(sd_context *ctx, sdi_executable *e, const float *in, float *out,
                      cudaStream_t stream)
{
    switch (e->kind) {
    case SDI_EXE_PROGRAM: {
        /* The caller's operands may change per call: the graph's node arguments are
         * updated in place, and a stream the caller captures gets plain launches
         * (sdi_program_run). */
        sd_status s = sdi_program_bind_buffer(&e->prog, "in", (void *)in, e->in_bytes, NULL);
        if (s == SD_OK)
            s = sdi_program_bind_buffer(&e->prog, "out", out, e->out_bytes, NULL);
        if (s != SD_OK)
            return s;
        if (e->prog.nlaunches == 0)
            return SD_OK; /* no rows: nothing to compute */
        return sdi_program_run(ctx, &e->prog, stream);
    }
    case SDI_EXE_VENDOR: return sdi_vendor_run(e->vendor, in, out, stream);
    case SDI_EXE_AGENT: {
        int rc = e->agent.compute(e->agent.state, in, out, stream);
        if (rc != 0)
            return SDI_ERR(SD_ERR_CUDA, "agent kernel: sd_agent_compute returned %d (%s)", rc,
                           cudaGetErrorString((cudaError_t)rc));
        return SD_OK;
    }
    case SDI_EXE_NONE: return SDI_ERR(SD_ERR_INTERNAL, "executable: run before build");
    default: break;
    }
    return SDI_ERR(SD_ERR_INTERNAL, "executable: not a dense-output kernel");
}

sd_status sdi_exe_run_spgemm(sd_context *ctx, sdi_executable *e, cudaStream_t stream,
                             sd_device_csr *c)
{
    (void)ctx;
    memset(c, 0, sizeof *c);
    if (e->kind == SDI_EXE_SPGEMM)
        return sdi_spgemm_exec_run(e->sg, stream, SDI_SG_ALLOC_ASYNC, c);
    if (e->kind == SDI_EXE_VENDOR_SPGEMM)
        return sdi_vendor_spgemm_run(e->vendor_sg, stream, c);
    return SDI_ERR(SD_ERR_INTERNAL, "executable: not a built SpGEMM kernel");
}

/* The program's value arrays, refreshed on the host, uploaded again (buffer i is array i). */
static sd_status upload_values(sd_context *ctx, sdi_executable *e)
{
#define SD_FREE_ALL /* nothing to release */
    for (int i = 0; i < e->low.narrays; i++) {
        const sdi_low_array *a = &e->low.arr[i];
        if (a->role != SDI_LOW_VALUE || a->host == NULL || a->host_bytes == 0)
            continue;
        if (i >= e->prog.nbuffers || strcmp(e->prog.buffers[i].name, a->name) != 0)
            return SDI_ERR(SD_ERR_INTERNAL, "update values: no device buffer %s", a->name);
        SD_TRY(sdi_copy_to_device(ctx, e->prog.buffers[i].dev, a->host, a->host_bytes, a->name));
    }
    return SD_OK;
#undef SD_FREE_ALL
}

sd_status sdi_exe_update_values(sd_context *ctx, sdi_executable *e, const sd_csr *a,
                                const sd_csr *b)
{
#define SD_FREE_ALL /* nothing to release */
    switch (e->kind) {
    case SDI_EXE_PROGRAM:
        SD_TRY(sdi_lowered_refresh(&e->low, a));
        return upload_values(ctx, e);
    case SDI_EXE_SPGEMM: return sdi_spgemm_operands_set_values(e->sg_ops, a->vals, b ? b->vals : NULL);
    case SDI_EXE_VENDOR: return sdi_vendor_update_values(e->vendor, a->vals);
    case SDI_EXE_VENDOR_SPGEMM:
        return sdi_vendor_spgemm_update_values(e->vendor_sg, a->vals, b ? b->vals : NULL);
    case SDI_EXE_AGENT:
        /* The harness has no value-refresh entry point: its representation is rebuilt from
         * the new values (preprocess copies what it needs; the pattern is unchanged). */
        if (e->agent.prepared)
            e->agent.cleanup(e->agent.state);
        e->agent.prepared = false;
        e->agent.state = NULL;
        return sdi_harness_prepare(&e->agent, a, (sd_op)e->op, e->k);
    default: return SDI_ERR(SD_ERR_INTERNAL, "executable: update before build");
    }
#undef SD_FREE_ALL
}

void sdi_exe_bytes(const sdi_executable *e, int64_t *value, int64_t *meta, int64_t *work)
{
    *value = *meta = *work = 0;
    if (e->kind == SDI_EXE_PROGRAM) {
        *value = e->low.bytes_value;
        *meta = e->low.bytes_meta;
        *work = e->low.bytes_work;
    } else if (e->kind == SDI_EXE_SPGEMM) {
        /* Operands: values of A (and B), the rest is index metadata; workspaces are W. */
        const int64_t ops = sdi_spgemm_operands_bytes(e->sg_ops);
        *value = sdi_spgemm_operands_value_bytes(e->sg_ops);
        *meta = ops - *value;
        *work = sdi_spgemm_exec_get_info(e->sg)->plan_bytes - ops;
    }
}

int64_t sdi_exe_peak_bytes(const sdi_executable *e)
{
    if (e->kind == SDI_EXE_SPGEMM)
        return sdi_spgemm_exec_get_info(e->sg)->peak_bytes;
    if (e->kind == SDI_EXE_VENDOR_SPGEMM)
        return sdi_vendor_spgemm_bytes(e->vendor_sg);
    return 0;
}

void sdi_exe_free(sdi_executable *e)
{
    if (e == NULL)
        return;
    sdi_program_free(&e->prog);
    sdi_module_unload(&e->mod);
    sdi_lowered_free(&e->low);
    sdi_spgemm_exec_destroy(e->sg);
    if (e->sg_owns_ops)
        sdi_spgemm_operands_destroy(e->sg_ops);
    sdi_vendor_destroy(e->vendor);
    sdi_vendor_spgemm_destroy(e->vendor_sg);
    sdi_harness_unload(&e->agent);
    memset(e, 0, sizeof *e);
}
