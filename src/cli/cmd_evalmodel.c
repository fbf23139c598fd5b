/* src/cli/cmd_evalmodel.c: `sparseditto evalmodel CORPUS.jsonl [--folds 5] [--seeds 5]
 * [--holdout 100] [--models LIST] [--cv-only] [energy training options] [--json]
 * [--out DIR]`: the comparison of the energy model with its baselines
 * (tools/evalmodel/rankers.h) under the protocol of sdi_model_evaluate, printed as markdown
 * tables (or JSON) and optionally written to DIR/evalmodel.md and DIR/evalmodel.json.
 * --cv-only runs the cross-validation on the matrices outside the hold-out and never
 * scores the hold-out: the mode for choosing training settings. --pcsr evaluates
 * ParamSpMM's decider instead on the same split (DIR/paramspmm.md and .json). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "energy_opts.h"
#include "evalmodel/importance.h"
#include "evalmodel/pcsr_eval.h"
#include "evalmodel/rankers.h"

static const sdc_option eval_options[] = {
    {"folds", 0, true, "cross-validation folds, 2..50 (default 5)"},
    {"seeds", 0, true, "training seeds per split, 1..50 (default 5)"},
    {"holdout", 0, true, "matrices held out as the test set, >= 0 (default 100; 0 = none)"},
    {"split-seed", 0, true, "seed of the hold-out and fold assignment (default 1)"},
    {"models", 0, true, "comma list of energy-v1, energy-nomargin, mlp, gbt, forest, rules-v1 "
                        "(default all)"},
    {"json", 0, false, "print the result as one JSON object instead of the tables"},
    {"out", 0, true, "directory to write evalmodel.md and evalmodel.json into"},
    {"quiet", 'q', false, "no progress lines on stderr"},
    {"importance", 0, true, "also the energy model's permutation importance per feature and "
                            "operator with N shuffles (trained on all but the hold-out, measured "
                            "on the hold-out): importance.md / .json in --out"},
    {"cv-only", 0, false, "only the cross-validation on the matrices outside the hold-out; "
                          "the hold-out is set aside and never scored (for choosing settings)"},
    {"pcsr", 0, false, "instead: ParamSpMM's <W,F,V,S> decider against the PCSR default and "
                       "the best fixed configuration, same split (paramspmm.md / .json in --out)"},
    /* The energy model's training options (--epochs also sets the MLP's). */
    SDC_ENERGY_OPTIONS,
};
enum { OPT_FOLDS, OPT_SEEDS, OPT_HOLDOUT, OPT_SPLIT, OPT_MODELS, OPT_JSON, OPT_OUT, OPT_QUIET,
       OPT_IMPORTANCE, OPT_CV_ONLY, OPT_PCSR, OPT_ENERGY, NOPTS = OPT_ENERGY + SDC_ENERGY_NOPTS };

/* The energy model trained (first seed) on the matrices outside the hold-out, and the
 * permutation importance of its features on the hold-out (on the training matrices when
 * there is no hold-out: said in the title). *md and j are filled on success. */
static sd_status importance(const sdi_corpus *c, const sdi_model_eval_opts *o, int repeats,
                            char **md, sdi_json *j)
{
    int *held = NULL, *keep = NULL;
    sdi_corpus train, test;
    sdi_energy_model m;
    memset(&train, 0, sizeof train);
    memset(&test, 0, sizeof test);
    memset(&m, 0, sizeof m);
#define SD_FREE_ALL                                                                        \
    do {                                                                                   \
        sdi_free(held);                                                                    \
        sdi_free(keep);                                                                    \
        sdi_corpus_free(&train);                                                           \
        sdi_corpus_free(&test);                                                            \
        sdi_energy_model_free(&m);                                                         \
    } while (0)
    size_t nr = c->nrecords > 0 ? (size_t)c->nrecords : 1;
    held = sdi_calloc(nr, sizeof *held);
    keep = sdi_calloc(nr, sizeof *keep);
    SD_CHECK_ALLOC(held, "hold-out flags");
    SD_CHECK_ALLOC(keep, "hold-out flags");
    if (o->holdout > 0)
        SD_TRY(sdi_corpus_holdout(c, o->holdout, o->split_seed, held));
    for (int r = 0; r < c->nrecords; r++)
        keep[r] = !held[r];
    SD_TRY(sdi_corpus_subset(c, keep, &train));
    SD_TRY(sdi_corpus_subset(c, o->holdout > 0 ? held : keep, &test));
    SD_TRY(sdi_energy_train(&train, &o->ranker.energy, &m));
    sdi_energy_importance imp;
    SD_TRY(sdi_energy_importance_compute(&m, &test, repeats, o->split_seed, &imp));
    char title[256];
    snprintf(title, sizeof title,
             "## Permutation importance of the energy model's features\n\nTrained on %d "
             "matrices (seed %llu), measured on %s (%d matrices).",
             sdi_corpus_count_matrices(&train, NULL), (unsigned long long)o->ranker.energy.seed,
             o->holdout > 0 ? "the hold-out" : "the training matrices (no hold-out)",
             sdi_corpus_count_matrices(&test, NULL));
    SD_TRY(sdi_energy_importance_markdown(&imp, title, md));
    sdi_energy_importance_json(&imp, j);
    SD_FREE_ALL;
    return sdi_json_finish(j);
#undef SD_FREE_ALL
}

static void progress(const char *line)
{
    fprintf(stderr, "evalmodel: %s\n", line);
}

static int parse_models(const char *text, unsigned *mask)
{
    *mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save)) {
        int k = sdi_ranker_from_name(w);
        if (k < 0)
            return sdc_usage_error("evalmodel: --models: unknown model '%s' (energy-v1, "
                                   "energy-nomargin, mlp, gbt, forest, rules-v1)", w);
        *mask |= 1u << k;
    }
    if (*mask == 0)
        return sdc_usage_error("evalmodel: --models is empty");
    return SDC_EXIT_OK;
}

/* Writes text to dir/name (atomically). */
static sd_status write_out(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return sdi_model_write_file(path, text, strlen(text));
}

/* --pcsr: ParamSpMM's decider on evalmodel's split (tools/evalmodel/pcsr_eval.h). */
static int eval_pcsr(int argc, char **argv, const sdc_args *args, const sdi_model_eval_opts *mo,
                     const char *outdir)
{
    sdi_pcsr_eval_opts o = sdi_pcsr_eval_opts_default();
    o.folds = mo->folds;
    o.seeds = mo->seeds;
    o.holdout = mo->holdout;
    o.split_seed = mo->split_seed;
    o.forest.seed = mo->ranker.seed;
    char command[1024];
    size_t len = (size_t)snprintf(command, sizeof command, "sparseditto");
    for (int i = 0; i < argc && len < sizeof command; i++)
        len += (size_t)snprintf(command + len, sizeof command - len, " %s", argv[i]);
    sdi_pcsr_eval_result r;
    sd_status s =
        sdi_pcsr_evaluate(args->pos[0], &o, args->present[OPT_QUIET] ? NULL : progress, &r);
    char *md = NULL;
    sdi_json j;
    sdi_json_init(&j, 2);
    if (s == SD_OK) {
        sdi_pcsr_eval_json(&r, &o, command, &j);
        s = sdi_json_finish(&j);
    }
    if (s == SD_OK)
        s = sdi_pcsr_eval_markdown(&r, &o, command, &md);
    if (s == SD_OK && outdir != NULL)
        s = write_out(outdir, "paramspmm.json", j.buf);
    if (s == SD_OK && outdir != NULL)
        s = write_out(outdir, "paramspmm.md", md);
    if (s == SD_OK && args->present[OPT_JSON])
        sdc_print_json(j.buf);
    else if (s == SD_OK)
        fputs(md, stdout);
    sdi_json_free(&j);
    sdi_free(md);
    return s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
}

int cmd_evalmodel(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, eval_options, NOPTS, 1, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("evalmodel CORPUS.jsonl [--folds 5] [--seeds 5] [--holdout 100] "
                       "[--cv-only] [--json] [--out DIR]",
                       "Compares the rankers of the template vocabulary on a measured corpus\n"
                       "(tools/evalmodel/rankers.h): the energy model, the energy model without its\n"
                       "margin term, an MLP with the same listwise loss, gradient-boosted trees and\n"
                       "random forests on log time relative to the task's fastest template, and the\n"
                       "rule table rules-v1. A stratified hold-out of --holdout matrices is kept\n"
                       "aside; the rest is split into --folds folds grouped by matrix and stratified\n"
                       "by shape class; every model is trained with --seeds seeds per split. Prints\n"
                       "top-1, regret, capture and cliff per operator (mean over runs) as markdown\n"
                       "tables, or JSON with --json. The energy options (--epochs ... --spmm-k-heads) set\n"
                       "how energy-v1 and energy-nomargin are trained (--seed: the first seed of\n"
                       "every model); --cv-only chooses them without looking at the hold-out.\n"
                       "--pcsr evaluates ParamSpMM's <W,F,V,S> decider instead (same split).",
                       eval_options, NOPTS);
        return SDC_EXIT_OK;
    }
    sdi_model_eval_opts o = sdi_model_eval_opts_default();
    long long v;
    if (args.value[OPT_FOLDS] != NULL) {
        if ((rc = sdc_parse_int(args.value[OPT_FOLDS], "--folds", 2, 50, &v)) != SDC_EXIT_OK)
            return rc;
        o.folds = (int)v;
    }
    if (args.value[OPT_SEEDS] != NULL) {
        if ((rc = sdc_parse_int(args.value[OPT_SEEDS], "--seeds", 1, 50, &v)) != SDC_EXIT_OK)
            return rc;
        o.seeds = (int)v;
    }
    if (args.value[OPT_HOLDOUT] != NULL) {
        if ((rc = sdc_parse_int(args.value[OPT_HOLDOUT], "--holdout", 0, 1000000, &v)) != 0)
            return rc;
        o.holdout = (int)v;
    }
    if (args.value[OPT_SPLIT] != NULL) {
        if ((rc = sdc_parse_int(args.value[OPT_SPLIT], "--split-seed", 0, (long long)1 << 62, &v)) != 0)
            return rc;
        o.split_seed = (unsigned long long)v;
    }
    if ((rc = sdc_energy_opts_parse(&args, OPT_ENERGY, "evalmodel", &o.ranker.energy)) != 0)
        return rc;
    if (args.value[OPT_ENERGY + SDC_EOPT_EPOCHS] != NULL)
        o.ranker.mlp.epochs = o.ranker.energy.epochs;
    o.ranker.seed = o.ranker.energy.seed;
    o.cv_only = args.present[OPT_CV_ONLY];
    if (args.present[OPT_PCSR] && (o.cv_only || args.value[OPT_IMPORTANCE] != NULL ||
                                   args.value[OPT_MODELS] != NULL))
        return sdc_usage_error("evalmodel: --pcsr takes none of --cv-only, --importance, --models");
    if (o.cv_only && args.value[OPT_IMPORTANCE] != NULL)
        return sdc_usage_error("evalmodel: --importance measures on the hold-out; not with "
                               "--cv-only");
    if (args.value[OPT_MODELS] != NULL && (rc = parse_models(args.value[OPT_MODELS], &o.kinds)) != 0)
        return rc;
    int repeats = 0;
    if (args.value[OPT_IMPORTANCE] != NULL) {
        if ((rc = sdc_parse_int(args.value[OPT_IMPORTANCE], "--importance", 1, 1000, &v)) != 0)
            return rc;
        repeats = (int)v;
    }
    const char *outdir = args.value[OPT_OUT];
    if (outdir != NULL && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "sparseditto: --out %s: cannot create: %s\n", outdir, strerror(errno));
        return SDC_EXIT_ENV;
    }
    if (args.present[OPT_PCSR])
        return eval_pcsr(argc, argv, &args, &o, outdir);

    sdi_corpus c;
    sd_status s = sdi_corpus_read(args.pos[0], &c);
    if (s != SD_OK)
        return sdc_fail(s);
    sdi_model_eval_result res;
    s = sdi_model_evaluate(&c, &o, args.present[OPT_QUIET] ? NULL : progress, &res);
    char *imp_md = NULL;
    sdi_json imp_j;
    sdi_json_init(&imp_j, 2);
    if (s == SD_OK && repeats > 0)
        s = importance(&c, &o, repeats, &imp_md, &imp_j);
    sdi_corpus_free(&c);
    if (s == SD_OK && imp_md != NULL && outdir != NULL)
        s = write_out(outdir, "importance.json", imp_j.buf);
    if (s == SD_OK && imp_md != NULL && outdir != NULL)
        s = write_out(outdir, "importance.md", imp_md);
    if (s == SD_OK && imp_md != NULL && !args.present[OPT_JSON])
        printf("%s\n", imp_md);
    sdi_free(imp_md);
    sdi_json_free(&imp_j);
    if (s != SD_OK)
        return sdc_fail(s);

    char *md = NULL;
    sdi_json j;
    sdi_json_init(&j, 2);
    sdi_model_eval_json(&res, &o, &j);
    s = sdi_json_finish(&j);
    if (s == SD_OK)
        s = sdi_model_eval_markdown(&res, &o, &md);
    if (s == SD_OK && outdir != NULL)
        s = write_out(outdir, "evalmodel.json", j.buf);
    if (s == SD_OK && outdir != NULL)
        s = write_out(outdir, "evalmodel.md", md);
    if (s == SD_OK) {
        if (args.present[OPT_JSON])
            sdc_print_json(j.buf);
        else
            fputs(md, stdout);
    }
    sdi_json_free(&j);
    sdi_free(md);
    return s == SD_OK ? SDC_EXIT_OK : sdc_fail(s);
}
