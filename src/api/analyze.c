/* src/api/analyze.c: the public analysis entry points: sd_analyze, feature names and
 * definitions, shape class names. */
#include <string.h>

#include "analysis/analysis.h"

sd_status sd_analyze(const sd_csr *a, sd_op op, sd_features *out)
{
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_analyze: out is NULL");
    memset(out, 0, sizeof *out);
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_analyze: a is NULL");
    if (op != SD_OP_SPMV && op != SD_OP_SPMM && op != SD_OP_SPGEMM)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_analyze: unknown operator %d", (int)op);
    sd_status s = sdi_analysis_check(a);
    if (s != SD_OK) {
        sdi_error_prefix("sd_analyze");
        return s;
    }
    s = sdi_features_compute(a, op, NULL, out, NULL);
    if (s != SD_OK) {
        memset(out, 0, sizeof *out);
        sdi_error_prefix("sd_analyze");
    }
    return s;
}

const char *sd_feature_name(int i)
{
    const sdi_feature_info *f = sdi_feature_get(i);
    return f != NULL ? f->name : NULL;
}

const char *sd_feature_description(int i)
{
    const sdi_feature_info *f = sdi_feature_get(i);
    return f != NULL ? f->definition : NULL;
}

const char *sd_shape_class_name(sd_shape_class c)
{
    switch (c) {
    case SD_SHAPE_UNIFORM: return "uniform";
    case SD_SHAPE_MODERATE: return "moderate";
    case SD_SHAPE_SKEWED: return "skewed";
    case SD_SHAPE_POWER_LAW: return "power-law";
    case SD_SHAPE_BIMODAL: return "bimodal";
    }
    return "unknown";
}
