/* src/cli/cmd_gen.c: `sparseditto gen SPEC -o FILE`: a synthetic matrix from the
 * generator families (src/gen), written with sd_csr_write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gen/gen.h"

static const sdc_option gen_options[] = {
    {"output", 'o', true, "the file to write (.mtx, .mtx.gz or .sdm by its name)"},
    {"seed", 0, true, "seed of the pattern and values (default 1)"},
    {"values", 0, true, "uniform (in [-1, 1), default), int (in {-2..2}) or ones"},
};
static const int n_gen_options = (int)(sizeof gen_options / sizeof gen_options[0]);

/* A twin spec without file= gets the shared paper60.tsv. */
static char *with_default_table(const char *spec)
{
    bool twin = strncmp(spec, "twin", 4) == 0 && (spec[4] == '\0' || spec[4] == ':');
    if (twin) {
        const char *colon = strchr(spec, ':');
        for (const char *p = colon; p != NULL; p = strchr(p + 1, ','))
            if (strncmp(p + 1, "file=", 5) == 0)
                twin = false;
    }
    const char *table = SD_MATRICES_DIR "/paper60.tsv";
    size_t n = strlen(spec) + (twin ? strlen(table) + 8 : 0) + 1;
    char *out = malloc(n);
    if (out == NULL)
        return NULL;
    if (twin) {
        /* "twin" → "twin:file=T", "twin:" → "twin:file=T", "twin:name=x" → "...,file=T" */
        const char *sep = spec[4] == '\0' ? ":" : (spec[5] == '\0' ? "" : ",");
        snprintf(out, n, "%s%sfile=%s", spec, sep, table);
    } else {
        snprintf(out, n, "%s", spec);
    }
    return out;
}

int cmd_gen(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, gen_options, n_gen_options, 1, 1, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("gen SPEC -o FILE [--seed N] [--values uniform|int|ones]",
                       "Generates a synthetic sparse matrix, deterministic in (SPEC, seed), and "
                       "writes it\nwith sd_csr_write. For twin, file= defaults to " SD_MATRICES_DIR
                       "/paper60.tsv.\n--values overrides a values= key of the spec.",
                       gen_options, n_gen_options);
        printf("\n%s", sdi_gen_help());
        return SDC_EXIT_OK;
    }
    const char *path = args.value[sdc_opt_index(gen_options, n_gen_options, "output")];
    if (path == NULL)
        return sdc_usage_error("gen: missing -o FILE (see sparseditto gen --help)");
    long long seed = 1;
    const char *seed_text = args.value[sdc_opt_index(gen_options, n_gen_options, "seed")];
    if (seed_text != NULL && sdc_parse_int(seed_text, "--seed", 0, INT64_MAX, &seed) != SDC_EXIT_OK)
        return SDC_EXIT_USAGE;
    const char *values_text = args.value[sdc_opt_index(gen_options, n_gen_options, "values")];
    sdi_values_mode mode = SDI_VALUES_UNIFORM;
    if (values_text != NULL && sdi_gen_values_mode_parse(values_text, &mode) != SD_OK)
        return sdc_usage_error("gen: --values '%s' is not one of uniform, int, ones",
                               values_text);
    char *spec = with_default_table(args.pos[0]);
    if (spec == NULL)
        return sdc_fail(SD_ERR_OUT_OF_MEMORY);
    sd_csr a;
    sd_status s = sdi_gen(spec, (uint64_t)seed, &a);
    free(spec);
    if (s == SD_ERR_INVALID_ARG) /* a bad spec is a bad argument */
        return sdc_usage_error("%s", sd_last_error());
    if (s != SD_OK)
        return sdc_fail(s);
    if (values_text != NULL)
        sdi_gen_values(&a, mode, (uint64_t)seed);
    s = sd_csr_write(path, &a);
    if (s != SD_OK) {
        sd_csr_free(&a);
        return sdc_fail(s);
    }
    printf("wrote %s: %d x %d, %lld entries\n", path, a.rows, a.cols, (long long)a.nnz);
    sd_csr_free(&a);
    return SDC_EXIT_OK;
}
