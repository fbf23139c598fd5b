/* src/cli/cmd_analyze.c: `sparseditto analyze FILE [--op spmv|spmm|spgemm] [-K n]
 * [--gpu NAME] [--json]`: the 36 structural features, the shape class and the GPU
 * context (read from device 0, or a built-in profile when no GPU is usable). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli.h"

/* src/runtime reads the properties of a device (SD_ERR_NO_DEVICE without one). */
sd_status sdi_runtime_gpu_props(int device, sdi_gpu_props *out);

static const sdc_option analyze_options[] = {
    {"op", 0, true, "operator: spmv (default), spmm or spgemm"},
    {"k", 'K', true, "dense width K of spmm, 1..65536 (default 32)"},
    {"gpu", 0, true, "built-in profile used when no GPU is usable (default H200)"},
    {"json", 0, false, "print one JSON object on stdout instead of the table"},
};
enum { OPT_OP, OPT_K, OPT_GPU, OPT_JSON, NOPTS };

static const char *op_name(sd_op op)
{
    return op == SD_OP_SPGEMM ? "spgemm" : op == SD_OP_SPMM ? "spmm" : "spmv";
}

static void print_help(void)
{
    sdc_print_help("analyze FILE [--op spmv|spmm|spgemm] [-K n] [--gpu NAME] [--json]",
                   "Reads a matrix (.mtx, .mtx.gz or .sdm) and prints its 36 structural features\n"
                   "(raw values; the model log-scales sizes itself), the shape class of its\n"
                   "row-length distribution and the GPU context. The GPU context is read from\n"
                   "device 0; without a usable GPU it is the built-in profile named by --gpu\n"
                   "(H200, H100, A100, RTX PRO 6000, RTX 4090, A6000), and the output says so.\n"
                   "JSON: {\"features\": {name: value, ...}, \"shape_class\": ..., \"gpu\": {...},\n"
                   "\"op\": ..., ...}.",
                   analyze_options, NOPTS);
    printf("\nfeatures (r_i: entries of row i, c_j: entries of column j; a ratio whose\n"
           "denominator is 0 is 0):\n");
    int group = -1;
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        const sdi_feature_info *f = sdi_feature_get(i);
        if ((int)f->group != group) {
            group = (int)f->group;
            printf("  %s:\n", sdi_feature_group_name(f->group));
        }
        printf("    %-20s %s\n", f->name, f->definition);
    }
    printf("\nshape classes (non-empty rows; first rule that holds): bimodal (two tight groups,\n"
           "each >= 1 %% of rows, means >= 4x apart), uniform (CV <= 0.3, max <= 3x mean),\n"
           "moderate (CV <= 1, max <= 10x mean), power-law (continuous tail over >= 3 octaves\n"
           "above 2x mean, top 1 %% of rows hold >= 4 %% of nnz), skewed (otherwise).\n");
}

/* Features print as integers when they are integral, else with 6 significant digits. */
static void print_value(double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        printf("%.0f", v);
    else
        printf("%.6g", v);
}

static void print_gpu_table(const sdi_gpu_props *g, const char *source)
{
    printf("\ngpu         %s (%s)\n", g->name, source);
    printf("  sm %d, cc %d.%d, L2 %.1f MiB, global memory %.1f GiB\n", g->sm_count, g->cc_major,
           g->cc_minor, (double)g->l2_bytes / (1024.0 * 1024.0),
           (double)g->global_mem_bytes / (1024.0 * 1024.0 * 1024.0));
    printf("  shared memory per CTA %d KiB (opt-in %d KiB), per SM %d KiB\n",
           g->smem_per_cta_default / 1024, g->smem_per_cta_optin / 1024, g->smem_per_sm / 1024);
    printf("  registers per CTA %d, per SM %d; threads per CTA %d, per SM %d; CTAs per SM %d\n",
           g->regs_per_cta, g->regs_per_sm, g->max_threads_per_cta, g->max_threads_per_sm,
           g->max_ctas_per_sm);
    printf("  memory bandwidth %.3g TB/s", g->mem_bandwidth / 1e12);
    if (g->copy_bandwidth > 0)
        printf(" (measured copy %.3g TB/s)", g->copy_bandwidth / 1e12);
    printf("\n");
}

static void json_gpu(sdi_json *j, const sdi_gpu_props *g, const char *source, const char *note)
{
    sdi_json_begin_object(j);
    sdi_json_key(j, "source");
    sdi_json_string(j, source);
    if (note != NULL) {
        sdi_json_key(j, "note");
        sdi_json_string(j, note);
    }
    sdi_json_key(j, "name");
    sdi_json_string(j, g->name);
    sdi_json_key(j, "sm_count");
    sdi_json_int(j, g->sm_count);
    char cc[24]; /* two ints at their widest */
    snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
    sdi_json_key(j, "compute_capability");
    sdi_json_string(j, cc);
    sdi_json_key(j, "l2_bytes");
    sdi_json_int(j, g->l2_bytes);
    sdi_json_key(j, "smem_per_cta_default");
    sdi_json_int(j, g->smem_per_cta_default);
    sdi_json_key(j, "smem_per_cta_optin");
    sdi_json_int(j, g->smem_per_cta_optin);
    sdi_json_key(j, "smem_per_sm");
    sdi_json_int(j, g->smem_per_sm);
    sdi_json_key(j, "regs_per_cta");
    sdi_json_int(j, g->regs_per_cta);
    sdi_json_key(j, "regs_per_sm");
    sdi_json_int(j, g->regs_per_sm);
    sdi_json_key(j, "max_threads_per_cta");
    sdi_json_int(j, g->max_threads_per_cta);
    sdi_json_key(j, "max_threads_per_sm");
    sdi_json_int(j, g->max_threads_per_sm);
    sdi_json_key(j, "max_ctas_per_sm");
    sdi_json_int(j, g->max_ctas_per_sm);
    sdi_json_key(j, "mem_bandwidth");
    sdi_json_number(j, g->mem_bandwidth);
    sdi_json_key(j, "copy_bandwidth");
    sdi_json_number(j, g->copy_bandwidth);
    sdi_json_key(j, "global_mem_bytes");
    sdi_json_int(j, g->global_mem_bytes);
    sdi_json_end_object(j);
}

int cmd_analyze(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, analyze_options, NOPTS, 1, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        print_help();
        return SDC_EXIT_OK;
    }
    sd_op op = SD_OP_SPMV;
    if (args.value[OPT_OP] != NULL) {
        const char *o = args.value[OPT_OP];
        if (strcmp(o, "spmv") == 0)
            op = SD_OP_SPMV;
        else if (strcmp(o, "spmm") == 0)
            op = SD_OP_SPMM;
        else if (strcmp(o, "spgemm") == 0)
            op = SD_OP_SPGEMM;
        else
            return sdc_usage_error("analyze: --op '%s' is not spmv, spmm or spgemm", o);
    }
    long long k = 32;
    if (args.value[OPT_K] != NULL) {
        rc = sdc_parse_int(args.value[OPT_K], "-K", 1, 65536, &k);
        if (rc != SDC_EXIT_OK)
            return rc;
    }
    const char *profile = args.value[OPT_GPU] != NULL ? args.value[OPT_GPU] : "H200";
    sdi_gpu_props gpu;
    if (sdi_gpu_profile(profile, &gpu) != SD_OK) /* checked before any work: a usage error */
        return sdc_usage_error("analyze: --gpu: %s", sd_last_error());

    const char *path = args.pos[0];
    sd_csr a;
    double t0 = sdi_now();
    sd_status s = sd_csr_read(path, &a);
    double t_read = sdi_now() - t0;
    if (s != SD_OK)
        return sdc_fail(s);
    sd_features f;
    sdi_analyze_info info;
    t0 = sdi_now();
    s = sdi_analysis_check(&a);
    if (s == SD_OK)
        s = sdi_features_compute(&a, op, NULL, &f, &info);
    double t_analyze = sdi_now() - t0;
    int square = a.rows == a.cols;
    sd_csr_free(&a);
    if (s != SD_OK)
        return sdc_fail(s);

    /* The GPU context: device 0 when usable, else the built-in profile. */
    char note[512] = "";
    const char *source = "device";
    sdi_gpu_props dev;
    if (sdi_runtime_gpu_props(0, &dev) == SD_OK) {
        gpu = dev;
    } else {
        snprintf(note, sizeof note, "built-in profile '%s' (%s)", profile, sd_last_error());
        source = "profile";
    }
    sdi_gpu_props_complete(&gpu);

    if (args.present[OPT_JSON]) {
        sdi_json j;
        sdi_json_init(&j, 2);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "file");
        sdi_json_string(&j, path);
        sdi_json_key(&j, "op");
        sdi_json_string(&j, op_name(op));
        if (op == SD_OP_SPMM) {
            sdi_json_key(&j, "k");
            sdi_json_int(&j, k);
            sdi_json_key(&j, "log2_k");
            sdi_json_number(&j, log2((double)k));
        }
        sdi_json_key(&j, "features");
        sdi_json_begin_object(&j);
        for (int i = 0; i < SD_NUM_FEATURES; i++) {
            sdi_json_key(&j, sd_feature_name(i));
            sdi_json_number(&j, f.values[i]);
        }
        sdi_json_end_object(&j);
        sdi_json_key(&j, "shape_class");
        sdi_json_string(&j, sd_shape_class_name(f.shape_class));
        sdi_json_key(&j, "shape_stats");
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "nonempty_rows");
        sdi_json_int(&j, info.shape.nonempty);
        sdi_json_key(&j, "cv");
        sdi_json_number(&j, info.shape.cv);
        sdi_json_key(&j, "max_mean");
        sdi_json_number(&j, info.shape.max_mean);
        sdi_json_key(&j, "top1_share");
        sdi_json_number(&j, info.shape.top1_share);
        sdi_json_end_object(&j);
        if (op == SD_OP_SPGEMM) {
            sdi_json_key(&j, "spgemm");
            sdi_json_begin_object(&j);
            sdi_json_key(&j, "product");
            sdi_json_string(&j, square ? "A*A" : "A*A^T");
            sdi_json_key(&j, "nnz_c");
            sdi_json_number(&j, info.spgemm.nnz_c);
            sdi_json_key(&j, "nnz_c_exact");
            sdi_json_bool(&j, info.spgemm.exact != 0);
            sdi_json_key(&j, "nnz_c_standard_error");
            sdi_json_number(&j, info.spgemm.nnz_c_se);
            sdi_json_key(&j, "rows_computed");
            sdi_json_int(&j, info.spgemm.rows_computed);
            sdi_json_end_object(&j);
        }
        sdi_json_key(&j, "gpu");
        json_gpu(&j, &gpu, source, note[0] ? note : NULL);
        sdi_json_key(&j, "seconds");
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "read");
        sdi_json_number(&j, t_read);
        sdi_json_key(&j, "analyze");
        sdi_json_number(&j, t_analyze);
        sdi_json_end_object(&j);
        sdi_json_end_object(&j);
        s = sdi_json_finish(&j);
        if (s != SD_OK) {
            sdi_json_free(&j);
            return sdc_fail(s);
        }
        sdc_print_json(j.buf);
        sdi_json_free(&j);
        return SDC_EXIT_OK;
    }

    printf("matrix      %s: %.0f x %.0f, %.0f entries\n", path, f.values[SDI_F_ROWS],
           f.values[SDI_F_COLS], f.values[SDI_F_NNZ]);
    printf("operator    %s", op_name(op));
    if (op == SD_OP_SPMM)
        printf(" (K = %lld)", k);
    if (op == SD_OP_SPGEMM)
        printf(" (C = %s; nnz(C) %s %.0f%s)", square ? "A*A" : "A*A^T",
               info.spgemm.exact ? "=" : "~", info.spgemm.nnz_c,
               info.spgemm.exact ? ", exact" : ", sampled");
    printf("\nshape       %s (non-empty rows: cv %.3g, max/mean %.3g, top 1 %% of rows hold "
           "%.3g %% of nnz)\n",
           sd_shape_class_name(f.shape_class), info.shape.cv, info.shape.max_mean,
           100.0 * info.shape.top1_share);
    int group = -1;
    for (int i = 0; i < SD_NUM_FEATURES; i++) {
        const sdi_feature_info *fi = sdi_feature_get(i);
        if ((int)fi->group != group) {
            group = (int)fi->group;
            printf("\n%s%s\n", sdi_feature_group_name(fi->group),
                   fi->group == SDI_FGROUP_OPERATOR && op != SD_OP_SPGEMM
                       ? " (spgemm only: 0 for this operator)"
                       : "");
        }
        printf("  %-20s ", fi->name);
        print_value(f.values[i]);
        printf("\n");
    }
    char src[600];
    if (note[0])
        snprintf(src, sizeof src, "%s", note);
    else
        snprintf(src, sizeof src, "read from device 0");
    print_gpu_table(&gpu, src);
    printf("\nanalysis    %.3f s (read %.3f s)\n", t_analyze, t_read);
    return SDC_EXIT_OK;
}
