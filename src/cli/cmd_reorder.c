/* src/cli/cmd_reorder.c: `sparseditto reorder IN OUT --method rabbit|rcm|degree`: writes
 * the permuted matrix and its permutation (OUT.perm or --perm FILE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/core.h"
#include "formats/reorder.h"

/* Largest |i − j| over the entries (bandwidth) and the mean |i − j|. */
static void band(const sd_csr *a, long long *bw, double *mean)
{
    long long b = 0;
    double sum = 0;
    for (int32_t i = 0; i < a->rows; i++)
        for (int64_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            long long d = llabs((long long)a->colind[k] - i);
            if (d > b)
                b = d;
            sum += (double)d;
        }
    *bw = b;
    *mean = a->nnz > 0 ? sum / (double)a->nnz : 0.0;
}

int cmd_reorder(int argc, char **argv)
{
    static const sdc_option opts[] = {
        {"method", 'm', true, "rabbit (default), rcm or degree"},
        {"perm", 'p', true, "where to write the permutation (default OUT.perm)"},
        {"json", 0, false, "print the statistics as JSON"},
    };
    const int nopts = (int)(sizeof opts / sizeof opts[0]);
    sdc_args args;
    int rc = sdc_parse(argc, argv, opts, nopts, 2, 2, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help(
            "reorder IN OUT [--method rabbit|rcm|degree] [--perm FILE] [--json]",
            "Reorders the rows (and, for a square matrix, the columns with the same\n"
            "permutation) and writes the permuted matrix to OUT (format by OUT's name, as\n"
            "'convert') and the permutation to OUT.perm: one 0-based index per line, line i\n"
            "holding the input row that became row i (new -> old).\n"
            "  rabbit  community order: vertices by increasing degree merge into the\n"
            "          neighbouring community of largest modularity gain; the order is a\n"
            "          DFS of the merge dendrogram (each community contiguous)\n"
            "  rcm     reverse Cuthill-McKee from pseudo-peripheral vertices\n"
            "  degree  rows by decreasing length (stable)\n"
            "Square matrices are reordered on the pattern of A + A^T. Rectangular matrices\n"
            "keep their columns: rows are ordered by length (degree) or as their vertices\n"
            "appear in the order of the bipartite row/column graph (rabbit, rcm).\n"
            "Only the pattern decides the order. Both files appear whole or not at all.",
            opts, nopts);
        return SDC_EXIT_OK;
    }
    int im = sdc_opt_index(opts, nopts, "method");
    const char *mname = args.value[im] ? args.value[im] : "rabbit";
    int method = sdi_reorder_method_from_name(mname);
    if (method < 0)
        return sdc_usage_error("reorder: unknown method '%s' (rabbit, rcm or degree)", mname);
    const char *out_path = args.pos[1];
    int ip = sdc_opt_index(opts, nopts, "perm");
    char *perm_path = NULL;
    if (args.value[ip] != NULL) {
        size_t n = strlen(args.value[ip]) + 1;
        perm_path = sdi_malloc(n);
        if (perm_path != NULL)
            memcpy(perm_path, args.value[ip], n);
    } else {
        size_t n = strlen(out_path) + 6;
        perm_path = sdi_malloc(n);
        if (perm_path != NULL)
            snprintf(perm_path, n, "%s.perm", out_path);
    }
    if (perm_path == NULL) {
        fprintf(stderr, "sparseditto: out of host memory\n");
        return SDC_EXIT_ENV;
    }
    sd_csr a, b;
    memset(&b, 0, sizeof b);
    int32_t *pr = NULL, *pc = NULL;
    sd_status s = sd_csr_read(args.pos[0], &a);
    if (s != SD_OK) {
        sdi_free(perm_path);
        return sdc_fail(s);
    }
    double t0 = sdi_now();
    s = sdi_reorder(&a, method, &pr, &pc);
    double t_order = sdi_now() - t0;
    if (s == SD_OK) {
        t0 = sdi_now();
        s = sdi_csr_permute(&a, pr, pc, &b);
    }
    double t_apply = sdi_now() - t0;
    /* The permutation first: if the matrix then fails, the permutation is removed. */
    if (s == SD_OK)
        s = sdi_perm_write(perm_path, pr, a.rows);
    if (s == SD_OK) {
        s = sd_csr_write(out_path, &b);
        if (s != SD_OK)
            remove(perm_path);
    }
    if (s != SD_OK) {
        rc = sdc_fail(s);
    } else {
        long long bw0, bw1;
        double m0, m1;
        band(&a, &bw0, &m0);
        band(&b, &bw1, &m1);
        if (args.present[sdc_opt_index(opts, nopts, "json")]) {
            sdi_json j;
            sdi_json_init(&j, 0);
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "method");
            sdi_json_string(&j, mname);
            sdi_json_key(&j, "rows");
            sdi_json_int(&j, a.rows);
            sdi_json_key(&j, "cols");
            sdi_json_int(&j, a.cols);
            sdi_json_key(&j, "nnz");
            sdi_json_int(&j, a.nnz);
            sdi_json_key(&j, "order_seconds");
            sdi_json_number(&j, t_order);
            sdi_json_key(&j, "apply_seconds");
            sdi_json_number(&j, t_apply);
            sdi_json_key(&j, "bandwidth_before");
            sdi_json_int(&j, bw0);
            sdi_json_key(&j, "bandwidth_after");
            sdi_json_int(&j, bw1);
            sdi_json_key(&j, "mean_distance_before");
            sdi_json_number(&j, m0);
            sdi_json_key(&j, "mean_distance_after");
            sdi_json_number(&j, m1);
            sdi_json_key(&j, "columns_permuted");
            sdi_json_bool(&j, pc != NULL);
            sdi_json_key(&j, "matrix");
            sdi_json_string(&j, out_path);
            sdi_json_key(&j, "perm");
            sdi_json_string(&j, perm_path);
            sdi_json_end_object(&j);
            if (sdi_json_finish(&j) == SD_OK)
                sdc_print_json(j.buf);
            sdi_json_free(&j);
        } else {
            printf("reordered %s (%s, %.3f s + %.3f s to apply): bandwidth %lld -> %lld, mean "
                   "|i-j| %.1f -> %.1f\nwrote %s and %s\n",
                   args.pos[0], mname, t_order, t_apply, bw0, bw1, m0, m1, out_path, perm_path);
        }
        rc = SDC_EXIT_OK;
    }
    sdi_free(pr);
    sdi_free(pc);
    sd_csr_free(&a);
    sd_csr_free(&b);
    sdi_free(perm_path);
    return rc;
}
