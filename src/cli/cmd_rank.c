/* src/cli/cmd_rank.c: `sparseditto rank FILE [--op spmv|spmm|spgemm] [-K n] [--model PATH]
 * [--json]`: the template vocabulary V_o ranked by energy (lowest first) with each
 * template's largest per-feature contributions; says which model ranked. */
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli.h"
#include "model/energy.h"

static const sdc_option rank_options[] = {
    {"op", 0, true, "operator: spmv (default), spmm or spgemm"},
    {"k", 'K', true, "dense width K of spmm, 1..65536 (default 32)"},
    {"model", 0, true, "energy model weights (from `sparseditto train`); without it the "
                       "shipped model (SPARSEDITTO_MODELS, models/energy.json) or else the "
                       "rule-based ranking (rules-v1) is used"},
    {"json", 0, false, "print one JSON object on stdout instead of the table"},
};
enum { OPT_OP, OPT_K, OPT_MODEL, OPT_JSON, NOPTS };

int cmd_rank(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, rank_options, NOPTS, 1, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("rank FILE [--op spmv|spmm|spgemm] [-K n] [--model PATH] [--json]",
                       "Analyses a matrix and ranks the operator's template vocabulary by energy\n"
                       "(lower is better), printing each template's largest per-feature\n"
                       "contributions: the learned energy model (energy-v1) when --model names\n"
                       "its weights, else the model the search uses (the shipped models/energy.json,\n"
                       "or rules-v1 without one; README \"Models\"). JSON: {\"file\",\n"
                       "\"op\", \"k\", \"shape_class\", \"model_path\", \"ranking\": {\"model\",\n"
                       "\"templates\": [{\"label\", \"energy\", \"reasons\": [{\"feature\",\n"
                       "\"value\", \"contribution\", \"why\"}]}]}}.",
                       rank_options, NOPTS);
        return SDC_EXIT_OK;
    }
    int op = args.value[OPT_OP] != NULL ? sdi_op_from_name(args.value[OPT_OP]) : SD_OP_SPMV;
    if (op < 0)
        return sdc_usage_error("rank: --op '%s' is not spmv, spmm or spgemm", args.value[OPT_OP]);
    long long k = 32;
    if (args.value[OPT_K] != NULL &&
        (rc = sdc_parse_int(args.value[OPT_K], "-K", 1, 65536, &k)) != SDC_EXIT_OK)
        return rc;
    if (op != SD_OP_SPMM)
        k = 1;
    const char *model_path = args.value[OPT_MODEL];
    sdi_energy_model m;
    memset(&m, 0, sizeof m);
    sd_status s;
    if (model_path != NULL && (s = sdi_energy_load(model_path, &m)) != SD_OK)
        return sdc_fail(s);

    sd_csr a;
    s = sd_csr_read(args.pos[0], &a);
    sd_features f;
    if (s == SD_OK) {
        s = sdi_analysis_check(&a);
        if (s == SD_OK)
            s = sdi_features_compute(&a, (sd_op)op, NULL, &f, NULL);
        sd_csr_free(&a);
    }
    sdi_ranking r;
    if (s == SD_OK)
        s = model_path != NULL ? sdi_rank_energy(&m, &f, (sd_op)op, (int)k, &r)
                               : sdi_rank(&f, (sd_op)op, (int)k, &r);
    sdi_energy_model_free(&m);
    if (s != SD_OK)
        return sdc_fail(s);

    if (args.present[OPT_JSON]) {
        sdi_json j;
        sdi_json_init(&j, 2);
        sdi_json_begin_object(&j);
        sdi_json_key(&j, "file");
        sdi_json_string(&j, args.pos[0]);
        sdi_ranking_report_json(&j, (sd_op)op, k, f.shape_class, model_path, &r);
        sdi_json_end_object(&j);
        s = sdi_json_finish(&j);
        if (s == SD_OK)
            sdc_print_json(j.buf);
        sdi_json_free(&j);
        return s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
    }
    printf("file   %s\nop     %s", args.pos[0], sdi_op_name((sd_op)op));
    if (op == SD_OP_SPMM)
        printf(" (K = %lld)", k);
    printf("\nshape  %s\n", sd_shape_class_name(f.shape_class));
    if (model_path != NULL)
        printf("model  %s (learned energy model, weights %s)\n\n", r.model, model_path);
    else if (strcmp(r.model, "rules-v1") == 0)
        printf("model  %s (rule-based ranking; %s; --model PATH uses a trained energy model)\n\n",
               r.model, r.note);
    else
        printf("model  %s (the search's model: %s)\n\n", r.model, r.note);
    printf("rank  template      energy   top contributions (feature = value: contribution)\n");
    for (int i = 0; i < r.n; i++) {
        const sdi_rank_entry *e = &r.e[i];
        printf("%4d  %-12s %8.4f", i + 1, e->label, e->energy);
        for (int q = 0; q < e->nreasons; q++) {
            const sdi_rank_reason *rr = &e->reasons[q];
            printf("%s%s", q == 0 ? "   " : "\n                                ", rr->feature);
            if (strcmp(rr->feature, "prior") != 0 && strcmp(rr->feature, "shape_class") != 0)
                printf(" = %.4g", rr->value);
            printf(": %+.4f  %s", rr->contribution, rr->why);
        }
        printf("\n");
    }
    return SDC_EXIT_OK;
}
