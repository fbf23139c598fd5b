/* src/analysis/analyze_task.c: the analysis of a task inside the library (the search, the
 * offline planner): the matrix's checks and its 36 features for op, without the public
 * entry point's argument checks and message prefix (sd_analyze wraps it). */
#include <string.h>

#include "analysis.h"
#include "plan_stats.h"

sd_status sdi_analyze(const sd_csr *a, sd_op op, sd_features *out)
{
    memset(out, 0, sizeof *out);
    sd_status s = sdi_analysis_check(a);
    if (s == SD_OK)
        s = sdi_features_compute(a, op, NULL, out, NULL);
    if (s != SD_OK) {
        memset(out, 0, sizeof *out);
        sdi_error_prefix("sd_analyze");
    }
    return s;
}
