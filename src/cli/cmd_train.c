/* src/cli/cmd_train.c: `sparseditto train CORPUS.jsonl -o WEIGHTS.json [--seed N]
 * [--epochs N] [--lambda X] [--temperature T] [--hidden H] [--lr X] [--weight-decay X]
 * [--batch N] [--ensemble M] [--cosine 0|1] [--spmm-k-heads 0|1] [--cv K [--cv-seeds S]]
 * [--forest DECIDER.json [--forest-k K]]`: trains the energy model
 * (and, with --forest, ParamSpMM's decider from the measured PCSR configurations) on a corpus (format in
 * tools/corpus/corpus.h), prints the loss per epoch, the training time and the fit's metrics,
 * and writes the weights; --cv first reports grouped k-fold held-out metrics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "corpus/pcsr_data.h"
#include "energy_opts.h"
#include "train/energy_train.h"
#include "train/forest_fit.h"

static const sdc_option train_options[] = {
    {"output", 'o', true, "weights file to write (JSON), e.g. models/energy.json (required)"},
    {"quiet", 'q', false, "no per-epoch lines"},
    {"cv", 0, true, "k-fold cross-validation grouped by matrix first, k >= 2 (-o optional)"},
    {"cv-seeds", 0, true, "training seeds per fold (seed, seed+1, ...; default 5)"},
    {"forest", 0, true, "also train ParamSpMM's <W,F,V,S> random-forest decider from the "
                        "corpus's measured PCSR configurations and write it here (-o optional)"},
    {"forest-k", 0, true, "one decider from the spmm tasks of this K only (default: one per K "
                          "of the corpus)"},
    SDC_ENERGY_OPTIONS,
};
enum { OPT_OUT, OPT_QUIET, OPT_CV, OPT_CV_SEEDS, OPT_FOREST, OPT_FOREST_K, OPT_ENERGY,
       NOPTS = OPT_ENERGY + SDC_ENERGY_NOPTS };

/* ParamSpMM's decider from the corpus's PCSR measurements (tools/corpus/pcsr_data.c): one
 * decider per K of the corpus (a version-2 file), or with k > 0 one decider of that K's
 * tasks (version 1). */
static int train_decider(const char *corpus, int k, unsigned long long seed, const char *out)
{
    double *X = NULL;
    sdi_paramspmm_params *y = NULL;
    int *ks = NULL, n = 0;
    sd_status s = sdi_paramspmm_examples_read(corpus, k, &X, &y, &ks, &n);
    if (s != SD_OK)
        return sdc_fail(s);
    if (n == 0) {
        fprintf(stderr, "sparseditto: %s: no spmm task%s with measured ParamSpMM (PCSR) "
                "configurations\n", corpus, k > 0 ? " of that K" : "");
        sdi_free(X);
        sdi_free(y);
        sdi_free(ks);
        return SDC_EXIT_INPUT;
    }
    sdi_forest_opts fo = sdi_forest_opts_default();
    fo.seed = seed;
    sdi_paramspmm_deciders d;
    double t0 = sdi_now();
    if (k > 0) {
        memset(&d, 0, sizeof d);
        d.n = 1;
        d.k[0] = k;
        s = sdi_paramspmm_decider_fit(X, y, n, &fo, &d.d[0]);
    } else {
        s = sdi_paramspmm_deciders_fit(X, y, ks, n, &fo, &d);
    }
    double secs = sdi_now() - t0;
    int exact = 0;
    for (int i = 0; s == SD_OK && i < n; i++) {
        sdi_paramspmm_params p;
        sdi_paramspmm_decide(sdi_paramspmm_deciders_for(&d, ks[i]),
                             X + (size_t)i * SDI_PSPMM_NFEAT, &p);
        exact += p.w == y[i].w && p.f == y[i].f && p.v == y[i].v && p.s == y[i].s;
    }
    char klist[96] = "";
    for (int m = 0, len = 0; s == SD_OK && m < d.n && len < (int)sizeof klist; m++)
        len += snprintf(klist + len, sizeof klist - (size_t)len, "%s%d", m ? ", " : "", d.k[m]);
    if (s == SD_OK)
        s = k > 0 ? sdi_paramspmm_decider_save(&d.d[0], out) : sdi_paramspmm_deciders_save(&d, out);
    const int members = d.n;
    sdi_paramspmm_deciders_free(&d);
    sdi_free(X);
    sdi_free(y);
    sdi_free(ks);
    if (s != SD_OK)
        return sdc_fail(s);
    printf("ParamSpMM decider: %d examples, %d decider%s (K = %s) of 4 forests of %d trees in "
           "%.3f s; reproduces the fastest <W,F,V,S> of %d (%.1f %%) of its training examples; "
           "written to %s\n", n, members, members == 1 ? "" : "s", klist, fo.ntrees, secs, exact,
           100.0 * exact / n, out);
    return SDC_EXIT_OK;
}

int cmd_train(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, train_options, NOPTS, 1, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("train CORPUS.jsonl -o WEIGHTS.json [--seed N] [--epochs N] [--lambda X] "
                       "[--temperature T] [--ensemble M]",
                       "Trains the additive energy model (docs/ARCHITECTURE.md, \"Energy model\") on a corpus of\n"
                       "measured template times (JSON Lines, one matrix per line: tools/corpus/corpus.h)\n"
                       "with AdamW, deterministically for a seed (--ensemble M: M members from\n"
                       "streams of the seed, mean energy); prints the loss per epoch, the\n"
                       "training time and top-1 / regret / capture / cliff on the corpus itself, and\n"
                       "writes the weights as JSON (read by `sparseditto rank --model`). --cv K first\n"
                       "runs K-fold cross-validation grouped by matrix name (--cv-seeds seeds per\n"
                       "fold) and prints held-out top-1, regret, capture and cliff per run and mean.\n"
                       "--forest D.json trains ParamSpMM's <W,F,V,S> decider (random forests) on the\n"
                       "fastest measured PCSR configuration of each spmm task of a `sparseditto\n"
                       "corpus` file, one decider per K of the corpus (K is not one of its\n"
                       "features), and writes it to D.json (shipped as models/paramspmm.json).",
                       train_options, NOPTS);
        return SDC_EXIT_OK;
    }
    long long folds = 0, cv_seeds = 5;
    if (args.value[OPT_CV] != NULL &&
        (rc = sdc_parse_int(args.value[OPT_CV], "--cv", 2, 100, &folds)) != SDC_EXIT_OK)
        return rc;
    if (args.value[OPT_CV_SEEDS] != NULL &&
        (rc = sdc_parse_int(args.value[OPT_CV_SEEDS], "--cv-seeds", 1, 100, &cv_seeds)) != 0)
        return rc;
    if (args.value[OPT_OUT] == NULL && folds == 0 && args.value[OPT_FOREST] == NULL)
        return sdc_usage_error("train: -o WEIGHTS.json is required (unless --cv or --forest is "
                               "given)");
    long long forest_k = 0;
    if (args.value[OPT_FOREST_K] != NULL &&
        (rc = sdc_parse_int(args.value[OPT_FOREST_K], "--forest-k", 1, 65536, &forest_k)) != 0)
        return rc;
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    if ((rc = sdc_energy_opts_parse(&args, OPT_ENERGY, "train", &o)) != SDC_EXIT_OK)
        return rc;
    o.verbose = !args.present[OPT_QUIET];
    if (args.value[OPT_FOREST] != NULL &&
        (rc = train_decider(args.pos[0], (int)forest_k, o.seed, args.value[OPT_FOREST])) != 0)
        return rc;
    if (args.value[OPT_OUT] == NULL && folds == 0)
        return SDC_EXIT_OK;

    sdi_corpus c;
    sd_status s = sdi_corpus_read(args.pos[0], &c);
    if (s != SD_OK)
        return sdc_fail(s);
    int measured = 0;
    for (int t = 0; t < c.ntasks; t++)
        for (int q = 0; q < SDI_RANK_MAX_TEMPLATES; q++)
            if (c.tasks[t].us[q] > 0) {
                measured++;
                break;
            }
    if (measured == 0) {
        sdi_corpus_free(&c);
        fprintf(stderr, "sparseditto: %s: no task has a measured template\n", args.pos[0]);
        return SDC_EXIT_INPUT;
    }
    printf("corpus %s: %d matrices, %d tasks (%d with measurements)\n", args.pos[0],
           sdi_corpus_count_matrices(&c, NULL), c.ntasks, measured);
    if (folds > 0) {
        sdi_energy_metrics mean, sd;
        sdi_energy_metrics *runs = calloc((size_t)(folds * cv_seeds), sizeof *runs);
        if (runs == NULL) {
            sdi_corpus_free(&c);
            fprintf(stderr, "sparseditto: out of memory\n");
            return SDC_EXIT_ENV;
        }
        double t0 = sdi_now();
        s = sdi_energy_cross_validate(&c, &o, (int)folds, (int)cv_seeds, 0, &mean, &sd, runs);
        if (s != SD_OK) {
            free(runs);
            sdi_corpus_free(&c);
            return sdc_fail(s);
        }
        printf("cross-validation: %lld folds grouped by matrix x %lld seeds (%.2f s)\n", folds,
               cv_seeds, sdi_now() - t0);
        for (int i = 0; i < folds * cv_seeds; i++)
            printf("  fold %lld seed %llu: %d tasks, top-1 %.3f, regret %.4f, capture %.3f, "
                   "cliff %.3f, loss %.4f\n", i / cv_seeds, o.seed + (unsigned long long)(i % cv_seeds),
                   runs[i].ntasks, runs[i].top1, runs[i].regret, runs[i].capture, runs[i].cliff,
                   runs[i].loss);
        printf("held-out mean (std): top-1 %.3f (%.3f), regret %.4f (%.4f), capture %.3f (%.3f), "
               "cliff %.3f (%.3f)\n", mean.top1, sd.top1, mean.regret, sd.regret, mean.capture,
               sd.capture, mean.cliff, sd.cliff);
        free(runs);
        if (args.value[OPT_OUT] == NULL) {
            sdi_corpus_free(&c);
            return SDC_EXIT_OK;
        }
    }
    sdi_energy_model m;
    double t0 = sdi_now();
    s = sdi_energy_train(&c, &o, &m);
    double secs = sdi_now() - t0;
    if (s != SD_OK) {
        sdi_corpus_free(&c);
        return sdc_fail(s);
    }
    sdi_energy_metrics em;
    sdi_energy_evaluate(&m, &c, &em);
    printf("trained %ld parameters (H = %d, %d member%s of %ld%s), %d epochs, seed %llu in "
           "%.3f s\n", m.nparams * m.members, m.hidden, m.members, m.members > 1 ? "s" : "",
           m.nparams, m.k_heads ? ", SpMM heads per K bucket" : "", o.epochs, o.seed, secs);
    printf("on the training corpus: loss %.6f, top-1 %.3f, regret %.4f, capture %.3f, cliff %.3f "
           "(%d tasks)\n", em.loss, em.top1, em.regret, em.capture, em.cliff, em.ntasks);
    s = sdi_energy_save(&m, args.value[OPT_OUT]);
    sdi_energy_model_free(&m);
    sdi_corpus_free(&c);
    if (s != SD_OK)
        return sdc_fail(s);
    printf("weights written to %s\n", args.value[OPT_OUT]);
    return SDC_EXIT_OK;
}
