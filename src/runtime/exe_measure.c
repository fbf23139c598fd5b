/* src/runtime/exe_measure.c: the measurement protocol on a SpMV / SpMM executable
 * (runtime/executable.h), apart from the run path: checking an output compiles the
 * validation kernel. */
#include "executable.h"

typedef struct {
    sdi_executable *e;
    const float *in;
    float *out;
    const sdi_reference *ref;
    sdi_validation *val;
} measure_arg;

static sd_status measure_run(sd_context *ctx, void *p, cudaStream_t stream)
{
    measure_arg *m = p;
    return sdi_exe_run(ctx, m->e, m->in, m->out, stream);
}

static sd_status measure_check(sd_context *ctx, void *p)
{
    measure_arg *m = p;
    return sdi_check_dense_output(ctx, m->ref, m->out, m->val);
}

sd_status sdi_exe_measure(sd_context *ctx, sdi_executable *e, const float *in, float *out,
                          const sdi_reference *ref, sdi_validation *val, const char *name,
                          sdi_timing *t)
{
    measure_arg m = {e, in, out, ref, val};
    return sdi_measure(ctx, name, measure_run, &m, ref != NULL ? measure_check : NULL, &m, t);
}
