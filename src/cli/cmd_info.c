/* src/cli/cmd_info.c: `sparseditto info FILE [--json]`: sizes, entry counts, symmetry,
 * field and row-length statistics of a matrix file. */
#include <stdio.h>

#include "cli.h"
#include "core/io.h"

static const sdc_option info_options[] = {
    {"json", 0, false, "print one JSON object on stdout instead of the table"},
};
#define INFO_NOPTS ((int)(sizeof info_options / sizeof info_options[0]))

static int print_json(const char *path, const sdi_mtx_info *in, const sd_csr *a,
                      const sdi_row_stats *rs, double seconds)
{
    sdi_json j;
    sdi_json_init(&j, 2);
    sdi_json_begin_object(&j);
    sdi_json_key(&j, "file");
    sdi_json_string(&j, path);
    sdi_json_key(&j, "format");
    sdi_json_string(&j, in->format == SDI_FORMAT_SDM ? "sdm" : "mtx");
    sdi_json_key(&j, "gzip");
    sdi_json_bool(&j, in->gzip);
    sdi_json_key(&j, "rows");
    sdi_json_int(&j, a->rows);
    sdi_json_key(&j, "cols");
    sdi_json_int(&j, a->cols);
    sdi_json_key(&j, "nnz");
    sdi_json_int(&j, a->nnz);
    sdi_json_key(&j, "nnz_stored");
    sdi_json_int(&j, in->nnz_stored);
    sdi_json_key(&j, "duplicates");
    sdi_json_int(&j, in->n_duplicates);
    sdi_json_key(&j, "symmetry");
    sdi_json_string(&j, sdi_mtx_symmetry_name(in->symmetry));
    sdi_json_key(&j, "field");
    sdi_json_string(&j, sdi_mtx_field_name(in->field));
    sdi_json_key(&j, "density");
    double cells = (double)a->rows * (double)a->cols;
    sdi_json_number(&j, cells > 0 ? (double)a->nnz / cells : 0.0);
    sdi_json_key(&j, "row_min");
    sdi_json_int(&j, rs->min);
    sdi_json_key(&j, "row_mean");
    sdi_json_number(&j, rs->mean);
    sdi_json_key(&j, "row_max");
    sdi_json_int(&j, rs->max);
    sdi_json_key(&j, "row_cv");
    sdi_json_number(&j, rs->cv);
    sdi_json_key(&j, "empty_rows");
    sdi_json_int(&j, rs->empty_rows);
    sdi_json_key(&j, "bytes_read");
    sdi_json_int(&j, in->text_bytes);
    sdi_json_key(&j, "read_seconds");
    sdi_json_number(&j, seconds);
    sdi_json_end_object(&j);
    sd_status s = sdi_json_finish(&j);
    if (s != SD_OK) {
        sdi_json_free(&j);
        return sdc_fail(s);
    }
    sdc_print_json(j.buf);
    sdi_json_free(&j);
    return SDC_EXIT_OK;
}

static void print_table(const char *path, const sdi_mtx_info *in, const sd_csr *a,
                        const sdi_row_stats *rs, double seconds)
{
    double cells = (double)a->rows * (double)a->cols;
    printf("file        %s\n", path);
    printf("format      %s\n", in->format == SDI_FORMAT_SDM ? "sdm (binary)"
                               : in->gzip                  ? "Matrix Market, gzip-compressed"
                                                           : "Matrix Market");
    printf("field       %s\n", sdi_mtx_field_name(in->field));
    printf("symmetry    %s\n", sdi_mtx_symmetry_name(in->symmetry));
    printf("size        %d x %d\n", a->rows, a->cols);
    printf("nnz         %lld (after symmetric expansion and summing duplicates)\n",
           (long long)a->nnz);
    printf("nnz_stored  %lld (entries in the file)\n", (long long)in->nnz_stored);
    printf("duplicates  %lld\n", (long long)in->n_duplicates);
    printf("density     %.3g\n", cells > 0 ? (double)a->nnz / cells : 0.0);
    printf("row length  min %lld, mean %.3f, max %lld, cv %.3f\n", (long long)rs->min,
           rs->mean, (long long)rs->max, rs->cv);
    printf("empty rows  %lld (%.2f %%)\n", (long long)rs->empty_rows,
           a->rows > 0 ? 100.0 * (double)rs->empty_rows / a->rows : 0.0);
    printf("read        %.3f s for %.1f MB%s (%.0f MB/s)\n", seconds,
           (double)in->text_bytes / 1e6, in->format == SDI_FORMAT_SDM ? "" : " of text",
           seconds > 0 ? (double)in->text_bytes / 1e6 / seconds : 0.0);
}

int cmd_info(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, info_options, INFO_NOPTS, 1, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("info FILE [--json]",
                       "Reads a matrix (.mtx, .mtx.gz or .sdm; the format is recognised by the\n"
                       "file's bytes) and prints its size, entry counts (nnz after symmetric\n"
                       "expansion and summing duplicates; nnz_stored as in the file), symmetry,\n"
                       "field and row-length statistics.",
                       info_options, INFO_NOPTS);
        return SDC_EXIT_OK;
    }
    const char *path = args.pos[0];
    sd_csr a;
    sdi_mtx_info in;
    double t0 = sdi_now();
    sd_status s = sdi_csr_read_info(path, &a, &in);
    double seconds = sdi_now() - t0;
    if (s != SD_OK)
        return sdc_fail(s);
    sdi_row_stats rs;
    sdi_csr_row_stats(&a, &rs);
    if (args.present[0])
        rc = print_json(path, &in, &a, &rs, seconds);
    else
        print_table(path, &in, &a, &rs, seconds);
    sd_csr_free(&a);
    return rc;
}
