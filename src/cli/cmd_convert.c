/* src/cli/cmd_convert.c: `sparseditto convert IN OUT`: any readable matrix to .mtx,
 * .mtx.gz or .sdm, chosen by OUT's name; a regular OUT appears whole or not at all, a
 * device or pipe is written in place, '-' is standard output (core/io.h's output files). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
                       "input is written expanded. A regular OUT is written to a temporary file\n"
                       "and renamed, so a failed conversion leaves no partial file and an existing\n"
                       "OUT untouched; it keeps its permission bits, and a read-only OUT is refused.\n"
                       "A symbolic link's target is written (the link stays); a device or FIFO\n"
                       "(/dev/null, a named pipe) is written in place. OUT '-' is standard output\n"
                       "(Matrix Market text); the summary line then goes to stderr.",
                       NULL, 0);
        return SDC_EXIT_OK;
    }
    sd_csr a;
    sd_status s = sd_csr_read(args.pos[0], &a);
    if (s != SD_OK)
        return sdc_fail(s);
    /* '-' is the descriptor itself, which the output-file routine writes in place. When
     * the matrix goes to standard output (by any name but a device like /dev/null, which
     * loses nothing), the summary must not follow it. */
    const char *out = args.pos[1];
    bool to_stdout = strcmp(out, "-") == 0;
    if (to_stdout)
        out = "/dev/stdout";
    struct stat so, st;
    if (!to_stdout && fstat(STDOUT_FILENO, &so) == 0 && stat(out, &st) == 0)
        to_stdout = so.st_dev == st.st_dev && so.st_ino == st.st_ino && !S_ISCHR(st.st_mode);
    s = sd_csr_write(out, &a);
    if (s != SD_OK) {
        sd_csr_free(&a);
        return sdc_fail(s);
    }
    fprintf(to_stdout ? stderr : stdout, "wrote %s: %d x %d, %lld entries\n", args.pos[1], a.rows,
            a.cols, (long long)a.nnz);
    sd_csr_free(&a);
    return SDC_EXIT_OK;
}
