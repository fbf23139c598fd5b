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

sd_status sdc_gen(const char *spec, uint64_t seed, sd_csr *out)
{
    char *full = sdi_gen_spec_with_table(spec, SD_MATRICES_DIR "/paper60.tsv");
    if (full == NULL) {
        memset(out, 0, sizeof *out);
        return SDI_ERR(SD_ERR_OUT_OF_MEMORY, "out of host memory for the generator spec");
    }
    sd_status s = sdi_gen(full, seed, out);
    sdi_free(full);
    return s;
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
    sd_csr a;
    sd_status s = sdc_gen(args.pos[0], (uint64_t)seed, &a);
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
