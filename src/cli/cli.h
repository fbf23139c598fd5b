/* src/cli/cli.h: the sparseditto command's shared pieces: exit codes, error printing,
 * option parsing. Each subcommand lives in cmd_<name>.c and is listed in main.c. */
#ifndef SDC_CLI_H
#define SDC_CLI_H

#include <stdbool.h>

#include "sparseditto.h"

/* Exit codes (documented in `sparseditto --help` and the README). */
enum {
    SDC_EXIT_OK = 0,       /* success */
    SDC_EXIT_INPUT = 1,    /* bad input: file or data */
    SDC_EXIT_USAGE = 2,    /* usage error: unknown option, missing argument */
    SDC_EXIT_ENV = 3,      /* environment: no device, no compiler, unwritable cache */
    SDC_EXIT_INTERNAL = 4  /* internal error */
};

/* Prints "sparseditto: <cause>" (sd_last_error, or the status string) to stderr and
 * returns the exit code for s. */
int sdc_fail(sd_status s);
/* Exit code for a status (without printing). */
int sdc_exit_code(sd_status s);
/* Prints "sparseditto: <message>" to stderr and returns SDC_EXIT_USAGE. */
int sdc_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Options: "--name" (long) and optionally "-c" (short); values as "--name v" or
 * "--name=v". Options may come before or after positionals. "--help"/"-h" always known. */
typedef struct {
    const char *name; /* long name without dashes, e.g. "json" */
    char short_name;  /* 0 for none */
    bool has_value;
    const char *help;  /* one line for --help */
} sdc_option;

#define SDC_MAX_OPTIONS 32
#define SDC_MAX_POSITIONALS 8

typedef struct {
    const char *value[SDC_MAX_OPTIONS]; /* by option index; NULL when absent */
    bool present[SDC_MAX_OPTIONS];
    const char *pos[SDC_MAX_POSITIONALS];
    int npos;
    bool help;
} sdc_args;

/* Parses argv[1..argc) (argv[0] is the subcommand's name). Returns SDC_EXIT_OK, or
 * prints a usage error and returns SDC_EXIT_USAGE. Positional counts are checked
 * unless --help was given. */
int sdc_parse(int argc, char **argv, const sdc_option *opts, int nopts, int min_pos,
              int max_pos, sdc_args *out);
/* Prints "usage: sparseditto <usage>\n\n<summary>\n\noptions:\n..." to stdout. */
void sdc_print_help(const char *usage, const char *summary, const sdc_option *opts, int nopts);
/* Index of option name in opts, or -1. */
int sdc_opt_index(const sdc_option *opts, int nopts, const char *name);
/* Parses a decimal integer in [lo, hi], also written with an exponent where that names an
 * integer exactly ("2e7"); prints a usage error naming opt on failure. */
int sdc_parse_int(const char *text, const char *opt, long long lo, long long hi, long long *out);

/* Shared by compile, plan and run (cmd_compile.c): --op spmv|spmm|spgemm; FILE (pattern
 * files get seeded values) or --gen SPEC (option index gen_index); SpGEMM's --b FILE2. */
int sdc_parse_op(const char *s, sd_op *op);
/* sdi_gen for every --gen of the command: a twin spec without file= gets the shared
 * paper60.tsv (cmd_gen.c). */
sd_status sdc_gen(const char *spec, uint64_t seed, sd_csr *out);
int sdc_load_matrix(const sdc_args *args, int gen_index, sd_csr *a, const char **src);
int sdc_load_b(const sdc_args *args, int b_index, sd_op op, sd_csr *b, bool *have);

/* --json (json_out.c): stdout carries JSON in every outcome. sdc_parse turns the mode on
 * when a command with a "json" option is given --json; sdc_fail and sdc_usage_error record
 * the first failure; a command prints its document with sdc_print_json (or says it printed
 * one with sdc_json_printed); main's sdc_json_finish prints {"error": {...}} on stdout when
 * the command failed without a document. */
void sdc_json_detect(int argc, char **argv, const sdc_option *opts, int nopts);
void sdc_json_note_failure(const char *status, int code, const char *message);
void sdc_print_json(const char *doc);
void sdc_json_printed(void);
int sdc_json_finish(int rc);

/* Subcommands: int cmd_<name>(int argc, char **argv), argv[0] = "<name>". */
typedef int (*sdc_command_fn)(int argc, char **argv);
typedef struct {
    const char *name;
    sdc_command_fn fn;
    const char *summary;
} sdc_command;

#endif /* SDC_CLI_H */
