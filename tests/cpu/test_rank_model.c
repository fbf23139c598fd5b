/* tests/cpu/test_rank_model.c: how the search's ranking (sdi_rank) finds and uses the
 * shipped energy model: SPARSEDITTO_MODELS pointing at a trained model ranks with
 * energy-v1 and its per-feature reasons; an empty value, a directory without a model, a
 * corrupt or truncated file and a model trained on other inputs all give rules-v1 with a
 * note (never an error); an operator the model has no data for falls back to the rules. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "train/energy_train.h"
#include "sdt.h"

static char dir[256];

static const char *path_in(const char *name)
{
    static char buf[4][384]; /* dir (256) + "/" + a name */
    static int slot;
    char *b = buf[slot++ & 3];
    snprintf(b, 384, "%s/%s", dir, name);
    return b;
}

/* Features of a small banded matrix, as the tuner computes them. */
static void some_features(sd_op op, sd_features *f)
{
    memset(f, 0, sizeof *f);
    for (int i = 0; i < SD_NUM_FEATURES; i++)
        f->values[i] = 1.0 + i;
    f->shape_class = SD_SHAPE_UNIFORM;
    f->op = op;
}

/* Ranks with SPARSEDITTO_MODELS = value (NULL: unset) after forgetting the last model. */
static sd_status rank_with(const char *value, sd_op op, sdi_ranking *r)
{
    if (value != NULL)
        setenv("SPARSEDITTO_MODELS", value, 1);
    else
        unsetenv("SPARSEDITTO_MODELS");
    sdi_config_reload();
    sdi_rank_model_reload();
    sd_features f;
    some_features(op, &f);
    return sdi_rank(&f, op, op == SD_OP_SPMM ? 32 : 1, r);
}

static void test_fallbacks(void)
{
    sdi_ranking r;
    /* A trained model (spmv and spmm tasks only). */
    sdi_corpus c;
    SDT_OK(sdi_corpus_synthetic(sdt_seed, 30, &c));
    int *keep = calloc((size_t)c.nrecords, sizeof *keep);
    for (int r2 = 0; r2 < c.nrecords; r2++)
        keep[r2] = 1;
    sdi_corpus nosg;
    SDT_OK(sdi_corpus_subset(&c, keep, &nosg));
    nosg.ntasks = 0;
    for (int t = 0; t < c.ntasks; t++)
        if (c.tasks[t].op != SD_OP_SPGEMM)
            nosg.tasks[nosg.ntasks++] = c.tasks[t];
    sdi_energy_train_opts o = sdi_energy_train_opts_default();
    o.epochs = 5;
    sdi_energy_model m;
    SDT_OK(sdi_energy_train(&nosg, &o, &m));
    SDT_CHECK(m.trained_ops == ((1u << SD_OP_SPMV) | (1u << SD_OP_SPMM)), "trained_ops %#x", m.trained_ops);
    mkdir(path_in("good"), 0777);
    SDT_OK(sdi_energy_save(&m, path_in("good/energy.json")));

    SDT_OK(rank_with(path_in("good"), SD_OP_SPMV, &r));
    SDT_CHECK(strcmp(r.model, "energy-v1") == 0 && strstr(r.note, "good/energy.json") != NULL,
              "model %s, note %s", r.model, r.note);
    SDT_CHECK(r.n == 9 && r.e[0].nreasons == SDI_RANK_MAX_REASONS, "%d templates, %d reasons", r.n,
              r.e[0].nreasons);
    for (int i = 1; i < r.n; i++)
        SDT_CHECK(r.e[i - 1].energy <= r.e[i].energy, "energies not sorted at %d", i);
    sdi_ranking direct;
    sd_features f;
    some_features(SD_OP_SPMV, &f);
    SDT_OK(sdi_rank_energy(&m, &f, SD_OP_SPMV, 1, &direct));
    SDT_CHECK(direct.e[0].energy == r.e[0].energy && strcmp(direct.e[0].label, r.e[0].label) == 0,
              "the loaded model ranks differently from the trained one");
    SDT_OK(rank_with(path_in("good"), SD_OP_SPMM, &r));
    SDT_CHECK(strcmp(r.model, "energy-v1") == 0, "spmm model %s", r.model);
    /* No spgemm tasks in training: the rules rank spgemm, and say why. */
    SDT_OK(rank_with(path_in("good"), SD_OP_SPGEMM, &r));
    SDT_CHECK(strcmp(r.model, "rules-v1") == 0 && strstr(r.note, "no spgemm training data") != NULL,
              "spgemm: model %s, note %s", r.model, r.note);

    /* Empty value: no model at all. */
    SDT_OK(rank_with("", SD_OP_SPMV, &r));
    SDT_CHECK(strcmp(r.model, "rules-v1") == 0 && strstr(r.note, "empty") != NULL, "empty: %s / %s",
              r.model, r.note);
    /* A directory without a model. */
    mkdir(path_in("none"), 0777);
    SDT_OK(rank_with(path_in("none"), SD_OP_SPMV, &r));
    SDT_CHECK(strcmp(r.model, "rules-v1") == 0 && strstr(r.note, "no energy.json") != NULL,
              "none: %s / %s", r.model, r.note);
    /* Corrupt and truncated files, another feature table: warnings, rules-v1. */
    char *text = NULL;
    size_t len = 0;
    SDT_OK(sdi_model_read_file(path_in("good/energy.json"), &text, &len));
    static const char *const cases[3] = {"bad", "trunc", "names"};
    for (int q = 0; q < 3; q++) {
        char sub[64], file[96];
        snprintf(sub, sizeof sub, "%s", cases[q]);
        mkdir(path_in(sub), 0777);
        snprintf(file, sizeof file, "%s/energy.json", sub);
        FILE *fp = fopen(path_in(file), "wb");
        if (q == 0) {
            fputs("{\"format\": \"sparseditto-energy\", \"version\": 1, garbage", fp);
        } else if (q == 1) {
            fwrite(text, 1, len / 2, fp);
        } else {
            char *p = strstr(text, "\"row_cv\"");
            if (p != NULL)
                p[6] = 'z'; /* "row_cz": a model for other inputs */
            fwrite(text, 1, len, fp);
        }
        fclose(fp);
        SDT_OK(rank_with(path_in(sub), SD_OP_SPMV, &r));
        SDT_CHECK(strcmp(r.model, "rules-v1") == 0 && strstr(r.note, "unusable model") != NULL,
                  "%s: model %s, note %s", cases[q], r.model, r.note);
    }
    SDT_CHECK(strstr(r.note, "row_cz") != NULL, "the note names the mismatch: %s", r.note);
    sdi_free(text);
    /* The ranking record says which ranker ran. */
    sdi_json j;
    sdi_json_init(&j, 0);
    sdi_ranking_json(&r, &j);
    SDT_OK(sdi_json_finish(&j));
    SDT_CHECK(strstr(j.buf, "\"model\":\"rules-v1\"") != NULL && strstr(j.buf, "\"note\":") != NULL,
              "json: %.200s", j.buf);
    sdi_json_free(&j);
    /* Unset: whatever the build ships (a model or none), never an error. */
    SDT_OK(rank_with(NULL, SD_OP_SPMV, &r));
    SDT_CHECK(r.n == 9, "unset: %d templates", r.n);
    free(keep);
    sdi_energy_model_free(&m);
    sdi_corpus_free(&nosg);
    sdi_corpus_free(&c);
}

int main(void)
{
    sdt_init("test_rank_model");
    snprintf(dir, sizeof dir, "/tmp/sd-test-rank-model-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    SDT_RUN(test_fallbacks);
    sdi_rank_model_reload();
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return sdt_finish();
}
