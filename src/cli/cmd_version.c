/* src/cli/cmd_version.c: `sparseditto version`. */
#include <stdio.h>

#include "cli.h"

int cmd_version(int argc, char **argv)
{
    sdc_args args;
    int rc = sdc_parse(argc, argv, NULL, 0, 0, 0, &args);
    if (rc != SDC_EXIT_OK)
        return rc;
    if (args.help) {
        sdc_print_help("version", "Prints the version of the linked library.", NULL, 0);
        return SDC_EXIT_OK;
    }
    printf("sparseditto %s\n", sd_version_string());
    return SDC_EXIT_OK;
}
