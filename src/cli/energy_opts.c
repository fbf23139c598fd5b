/* src/cli/energy_opts.c: parsing of the energy model's training options (energy_opts.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_opts.h"

/* A finite double ≥ lo (> lo when strict) from text[0..len); 0 when it is not one. */
static int number(const char *text, size_t len, double lo, int strict, double *out)
{
    char buf[64], *end = NULL;
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, text, len);
    buf[len] = '\0';
    double v = strtod(buf, &end);
    if (end == buf || *end != '\0' || !isfinite(v) || v < lo || (strict && v == lo))
        return 0;
    *out = v;
    return 1;
}

static int one_double(const char *text, const char *cmd, const char *opt, double lo, int strict,
                      double *out)
{
    if (!number(text, strlen(text), lo, strict, out))
        return sdc_usage_error("%s: %s '%s' is not a number %s %g", cmd, opt, text,
                               strict ? ">" : ">=", lo);
    return SDC_EXIT_OK;
}

int sdc_energy_opts_parse(const sdc_args *args, int first, const char *cmd,
                          sdi_energy_train_opts *o)
{
    const char *const *val = args->value + first;
    long long v;
    int rc;
    if (val[SDC_EOPT_SEED] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_SEED], "--seed", 0, (long long)1 << 62, &v)) != 0)
            return rc;
        o->seed = (unsigned long long)v;
    }
    if (val[SDC_EOPT_EPOCHS] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_EPOCHS], "--epochs", 0, 100000, &v)) != 0)
            return rc;
        o->epochs = (int)v;
    }
    if (val[SDC_EOPT_HIDDEN] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_HIDDEN], "--hidden", 1, 64, &v)) != 0)
            return rc;
        o->hidden = (int)v;
    }
    if (val[SDC_EOPT_BATCH] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_BATCH], "--batch", 1, 100000, &v)) != 0)
            return rc;
        o->batch = (int)v;
    }
    if (val[SDC_EOPT_ENSEMBLE] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_ENSEMBLE], "--ensemble", 1, SDI_EM_MAX_MEMBERS,
                                &v)) != 0)
            return rc;
        o->ensemble = (int)v;
    }
    if (val[SDC_EOPT_COSINE] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_COSINE], "--cosine", 0, 1, &v)) != 0)
            return rc;
        o->cosine = (int)v;
    }
    if (val[SDC_EOPT_KHEADS] != NULL) {
        if ((rc = sdc_parse_int(val[SDC_EOPT_KHEADS], "--spmm-k-heads", 0, 1, &v)) != 0)
            return rc;
        o->k_heads = (int)v;
    }
    if (val[SDC_EOPT_LAMBDA] != NULL) {
        /* One value for every operator, or exactly one per operator. */
        const char *t = val[SDC_EOPT_LAMBDA];
        double l[SDI_EM_NOP];
        int n = 0;
        for (const char *p = t;; n++) {
            const char *comma = strchr(p, ',');
            size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
            if (n >= SDI_EM_NOP || !number(p, len, 0, 0, &l[n]))
                return sdc_usage_error("%s: --lambda '%s': need one number >= 0 or three "
                                       "(spmv,spmm,spgemm)", cmd, t);
            if (comma == NULL)
                break;
            p = comma + 1;
        }
        n++;
        if (n != 1 && n != SDI_EM_NOP)
            return sdc_usage_error("%s: --lambda '%s': need one number >= 0 or three "
                                   "(spmv,spmm,spgemm)", cmd, t);
        for (int i = 0; i < SDI_EM_NOP; i++)
            o->lambda[i] = l[n == 1 ? 0 : i];
    }
    if (val[SDC_EOPT_T] != NULL &&
        (rc = one_double(val[SDC_EOPT_T], cmd, "--temperature", 0, 1, &o->temperature)) != 0)
        return rc;
    if (val[SDC_EOPT_LR] != NULL &&
        (rc = one_double(val[SDC_EOPT_LR], cmd, "--lr", 0, 1, &o->lr)) != 0)
        return rc;
    if (val[SDC_EOPT_WD] != NULL &&
        (rc = one_double(val[SDC_EOPT_WD], cmd, "--weight-decay", 0, 0, &o->weight_decay)) != 0)
        return rc;
    return SDC_EXIT_OK;
}
