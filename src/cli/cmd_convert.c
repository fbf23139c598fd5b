/* src/cli/cmd_convert.c: `sparseditto convert IN OUT`: any readable matrix to .mtx,
 * .mtx.gz or .sdm, chosen by OUT's name; OUT appears whole or not at all. */
#include <stdio.h>

#include "cli.h"

int cmd_convert(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, NULL, 0, 2, 2, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("convert IN OUT",
                       "Reads IN (.mtx, .mtx.gz or .sdm, recognised by its bytes) and writes\n"
                       "OUT: binary .sdm when OUT ends in '.sdm', gzip-compressed Matrix Market\n"
                       "when it ends in '.gz', Matrix Market coordinate real general otherwise\n"
                       "(values with 9 significant digits, which read back exactly). Symmetric\n"
                       "input is written expanded. OUT is written to a temporary file and\n"
                       "renamed, so a failed conversion leaves no partial file and an existing\n"
                       "OUT untouched.",
                       NULL, 0);
        return SDC_EXIT_OK;
    }
    sd_csr a;
    sd_status s = sd_csr_read(args.pos[0], &a);
    if (s != SD_OK)
        return sdc_fail(s);
    s = sd_csr_write(args.pos[1], &a);
    if (s != SD_OK) {
        sd_csr_free(&a);
        return sdc_fail(s);
    }
    printf("wrote %s: %d x %d, %lld entries\n", args.pos[1], a.rows, a.cols, (long long)a.nnz);
    sd_csr_free(&a);
    return SDC_EXIT_OK;
}
