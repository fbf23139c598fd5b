/* src/cli/main.c: the sparseditto command: dispatch to subcommands. */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* One declaration and one table line per subcommand; each is defined in cmd_<name>.c. */
int cmd_version(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_reorder(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_rank(int argc, char **argv);
int cmd_worker(int argc, char **argv); /* hidden: not in the command table's help */
int cmd_corpus(int argc, char **argv);
int cmd_evalmodel(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_profile(int argc, char **argv);

static const sdc_command commands[] = {
    {"version", cmd_version, "print the library version"},
    {"info", cmd_info, "size, entry counts, symmetry and row lengths of a matrix file"},
    {"convert", cmd_convert, "convert a matrix between .mtx, .mtx.gz and .sdm"},
    {"analyze", cmd_analyze, "the 36 structural features, shape class and GPU context"},
    {"baseline", cmd_baseline, "every cuSPARSE variant for an operator, validated and timed"},
    {"reorder", cmd_reorder, "graph reordering (rabbit, rcm, degree) with its permutation"},
    {"gen", cmd_gen, "a synthetic matrix from a generator family (stencils, rmat, twins, ...)"},
    {"plan", cmd_plan, "the first-round candidate plans with their static bounds (no GPU)"},
    {"compile", cmd_compile, "build, validate and measure the kernel that fits a matrix"},
    {"run", cmd_run, "run the cached kernel of a matrix: validated once, then timed (no search)"},
    {"cache", cmd_cache, "what the kernel and JIT caches hold; --clear a part of them"},
    {"train", cmd_train, "train the energy model on a corpus of measured template times"},
    {"rank", cmd_rank, "rank the template vocabulary of an operator for a matrix, with reasons"},
    {"corpus", cmd_corpus, "measure the training corpus of the ranking models (resumable, GPU)"},
    {"evalmodel", cmd_evalmodel, "compare the energy model with its baselines on a corpus"},
    {"bench", cmd_bench, "the compiler benchmark suite: every task of a set against cuSPARSE"},
    {"profile", cmd_profile, "Nsight Compute counters of a compiled kernel vs cuSPARSE (Table 1)"},
};
static const int ncommands = (int)(sizeof commands / sizeof commands[0]);

static void usage(FILE *f)
{
    fprintf(f, "usage: sparseditto <command> [options] [args]\n\n"
               "SparseDitto %s: specialised sparse GPU kernels (SpMV, SpMM, SpGEMM).\n\n"
               "commands:\n",
            sd_version_string());
    for (int i = 0; i < ncommands; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'sparseditto <command> --help' describes a command.\n\n"
               "exit codes: 0 success, 1 bad input (file or data), 2 usage error,\n"
               "            3 environment (no device, no compiler, unwritable cache),\n"
               "            4 internal error. Errors go to stderr as 'sparseditto: <cause>'.\n");
}

/* Standard output is buffered: a full disk, /dev/full or a closed descriptor shows only
 * when it is flushed, after the command has returned. Checked here, once for every
 * command, so no output is silently lost behind exit status 0. A stdio stream keeps only
 * "an error happened", so (with glibc) stdout writes through stdout_write, which keeps the
 * first error's cause for the message. */
static int g_stdout_errno;

#ifdef __GLIBC__
static ssize_t stdout_write(void *cookie, const char *buf, size_t n)
{
    size_t done = 0;
    while (done < n && g_stdout_errno == 0) {
        ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            g_stdout_errno = w < 0 ? errno : EIO;
        else
            done += (size_t)w;
    }
    return g_stdout_errno == 0 ? (ssize_t)n : 0; /* 0: the stream's error flag */
}

static void stdout_keep_errors(void)
{
    cookie_io_functions_t io = {NULL, stdout_write, NULL, NULL};
    FILE *f = fopencookie(NULL, "w", io);
    if (f == NULL)
        return; /* the plain stream: its errors are still caught, without their cause */
    setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
    stdout = f;
}
#else
static void stdout_keep_errors(void) {}
#endif

static int finish(int rc)
{
    rc = sdc_json_finish(rc);
    errno = 0;
    bool bad = fflush(stdout) != 0 || ferror(stdout);
    int e = g_stdout_errno != 0 ? g_stdout_errno : errno;
    fclose(stdout);
    /* The close of the descriptor can fail too (a network file system reports errors
     * then). EBADF alone means stdout was closed from the start and nothing was written. */
    if (close(STDOUT_FILENO) != 0 && !bad && errno != EBADF) {
        bad = true;
        e = errno;
    }
    if (!bad)
        return rc;
    fprintf(stderr, "sparseditto: cannot write standard output: %s\n",
            e != 0 ? strerror(e) : "write error");
    return rc != SDC_EXIT_OK ? rc : sdc_exit_code(SD_ERR_IO);
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SDC_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return SDC_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sparseditto %s\n", sd_version_string());
        return SDC_EXIT_OK;
    }
    /* The candidate worker the tuner starts (isolate/worker.h); internal, so unlisted. */
    if (strcmp(argv[1], "worker") == 0)
        return cmd_worker(argc - 1, argv + 1);
    for (int i = 0; i < ncommands; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    return sdc_usage_error("unknown command '%s' (see sparseditto --help)", argv[1]);
}

int main(int argc, char **argv)
{
    stdout_keep_errors();
    return finish(run(argc, argv));
}
