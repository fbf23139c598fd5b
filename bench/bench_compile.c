/* bench/bench_compile.c: the compiler end to end through the public API (sd_compile) —
 * the headline benchmark. The suite itself lives in tools/bench/bench_suite.c,
 * shared with `sparseditto bench` (the same run, options and files); this program keeps
 * the benchmark's own command line.
 *
 *   bench_compile [--out DIR] [--set quick|real|paper60|LIST] [--ops spmv,spmm8,...]
 *                 [--max-nnz N] [--time-limit S] [--budget N] [--from I] [--dir MATRICES_DIR]
 *                 [--deterministic]
 * (--from I starts at the I-th matrix of the set, to continue an earlier run; --deterministic
 * also compiles each task in deterministic mode and reports the cost of reproducibility.)
 *
 * Writes DIR/bench_compile.json and DIR/bench_compile.md. Exit 0 when every attempted
 * task compiled, 1 when one failed, 3 without a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_suite.h"

int main(int argc, char **argv)
{
    sdb_options o = sdb_options_default("bench_compile", SD_MATRICES_DIR);
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--out") && v) o.out = v, i++;
        else if (!strcmp(argv[i], "--set") && v) o.set = v, i++;
        else if (!strcmp(argv[i], "--ops") && v) o.ops = v, i++;
        else if (!strcmp(argv[i], "--dir") && v) o.dir = v, i++;
        else if (!strcmp(argv[i], "--max-nnz") && v) o.max_nnz = atof(v), i++;
        else if (!strcmp(argv[i], "--time-limit") && v) o.time_limit = atof(v), i++;
        else if (!strcmp(argv[i], "--budget") && v) o.budget = atoi(v), i++;
        else if (!strcmp(argv[i], "--from") && v) o.from = atoi(v), i++;
        else if (!strcmp(argv[i], "--deterministic")) o.deterministic = 1;
        else {
            fprintf(stderr, "usage: bench_compile [--out DIR] [--set quick|real|paper60|LIST] [--ops LIST] "
                            "[--max-nnz N] [--time-limit S] [--budget N] [--from I] [--dir DIR] "
                            "[--deterministic]\n");
            return 2;
        }
    }
    return sdb_run(&o);
}
