/* src/core/csr_io.c: the public sd_csr_read / sd_csr_write (format chosen by magic
 * bytes on reading, by file name on writing). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "io.h"

/* ------------------------------------------------------------------ read / write */

sd_status sdi_csr_read_info(const char *path, sd_csr *out, sdi_mtx_info *info)
{
    if (info != NULL)
        memset(info, 0, sizeof *info);
    if (out == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_read: output matrix is NULL");
    memset(out, 0, sizeof *out);
    if (path == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_read: path is NULL");
    /* The format is what the bytes say, not what the name says. The input is opened
     * once and its first bytes passed on: a pipe cannot be reopened or rewound. */
    sdi_input in;
    sd_status s = sdi_input_open(&in, path);
    if (s != SD_OK)
        return s;
    if (in.head_len == sizeof in.head && memcmp(in.head, SDI_SDM_MAGIC, 8) == 0) {
        double t0 = sdi_now();
        s = sdi_sdm_read_input(&in, out);
        if (s == SD_OK && info != NULL) {
            info->format = SDI_FORMAT_SDM;
            info->field = SDI_MTX_REAL;
            info->symmetry = SDI_MTX_GENERAL;
            info->rows = out->rows;
            info->cols = out->cols;
            info->nnz_declared = info->nnz_stored = info->nnz = out->nnz;
            info->text_bytes = SDI_SDM_HEADER_BYTES + 8 * ((int64_t)out->rows + 1) +
                               8 * out->nnz + 8;
            info->parse_seconds = sdi_now() - t0;
        }
    } else {
        s = sdi_mtx_read_input(&in, out, info);
    }
    if (s != SD_OK)
        sdi_error_prefix("%s", in.name);
    sdi_input_close(&in);
    return s;
}

sd_status sd_csr_read(const char *path, sd_csr *out)
{
    return sdi_csr_read_info(path, out, NULL);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

sd_status sd_csr_write(const char *path, const sd_csr *a)
{
    if (path == NULL || path[0] == '\0')
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_write: path is NULL or empty");
    if (a == NULL)
        return SDI_ERR(SD_ERR_INVALID_ARG, "sd_csr_write: matrix is NULL");
    sd_status s = sd_csr_check(a);
    if (s != SD_OK) {
        sdi_error_prefix("sd_csr_write");
        return s;
    }
    if (ends_with(path, ".sdm"))
        return sdi_sdm_write(path, a);
    return sdi_mtx_write(path, a, ends_with(path, ".gz"));
}

void sdi_csr_row_stats(const sd_csr *a, sdi_row_stats *out)
{
    memset(out, 0, sizeof *out);
    if (a->rows <= 0)
        return;
    out->min = INT64_MAX;
    for (int32_t i = 0; i < a->rows; i++) {
        int64_t r = a->rowptr[i + 1] - a->rowptr[i];
        out->min = r < out->min ? r : out->min;
        out->max = r > out->max ? r : out->max;
        out->empty_rows += (r == 0);
    }
    out->mean = (double)a->nnz / a->rows;
    double ss = 0; /* two passes: no cancellation in the variance */
    for (int32_t i = 0; i < a->rows; i++) {
        double d = (double)(a->rowptr[i + 1] - a->rowptr[i]) - out->mean;
        ss += d * d;
    }
    out->cv = out->mean > 0 ? sqrt(ss / a->rows) / out->mean : 0;
}
