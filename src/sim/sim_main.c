/*
 * sim_main: `cueue sim [flags] SCENARIO`, the command line of the
 * simulator (docs/sim.md). Exit status: 0 done (and, with --check, every
 * expected fact held), 1 a --check fact failed, 2 bad usage, an invalid
 * scenario or a failed action.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/sim-int.h"
#include "sim/sim.h"
#include "util/err.h"
#include "util/xalloc.h"

static const char usage_text[] =
    "usage: cueue sim [flags] SCENARIO\n"
    "\n"
    "Run the control plane (the same reconcilers and admission engine as\n"
    "`cueue server`) in virtual time over a scenario: objects, a capacity model\n"
    "per node pool and timed actions (docs/sim.md). Prints a trace, one JSON\n"
    "object per line, then a summary.\n"
    "\n"
    "flags:\n"
    "  --until T        stop at simulated time T (a duration: 90s, 10m, 2h, 1d)\n"
    "  --trace FILE     write the trace to FILE instead of stdout\n"
    "  --summary-only   print only the summary (the trace still goes to --trace FILE)\n"
    "  -o, --output F   summary format: text (default) or json\n"
    "  --check          check the scenario's `expect` facts against the trace;\n"
    "                   prints a report instead of the summary, exit 1 on failure\n"
    "  -q, --quiet      no warnings on stderr\n"
    "  -h, --help       this text\n";

struct args {
    const char *path;
    const char *trace_path;
    int64_t until_rel;
    bool summary_only;
    bool json;
    bool check;
    bool quiet;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    static const struct option longopts[] = {
        {"until", required_argument, NULL, 'u'},
        {"trace", required_argument, NULL, 't'},
        {"summary-only", no_argument, NULL, 's'},
        {"output", required_argument, NULL, 'o'},
        {"check", no_argument, NULL, 'c'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof(*a));
    a->until_rel = -1;
    optind = 0; /* glibc: a full re-initialisation (the CLI may have parsed before) */
    opterr = 0;
    int c;
    int n_files = 0;
    const char *extra = NULL;
    /* flags may follow the SCENARIO (getopt permutes argv); `--` ends them */
    while ((c = getopt_long(argc, argv, "-:o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'u': {
            int rc = sim_duration_ms(optarg, &a->until_rel);
            if (rc == CU_ELIMIT) {
                fprintf(stderr, "cueue sim: --until: \"%s\" is too large (at most %s)\n",
                        optarg, SIM_MAX_DURATION_TEXT);
                return 2;
            }
            if (rc) {
                fprintf(stderr, "cueue sim: --until: invalid duration \"%s\" (e.g. 90s, 10m, "
                                "2h, 1d)\n", optarg);
                return 2;
            }
            break;
        }
        case 't': a->trace_path = optarg; break;
        case 's': a->summary_only = true; break;
        case 'c': a->check = true; break;
        case 'q': a->quiet = true; break;
        case 'o':
            if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
                fprintf(stderr, "cueue sim: -o: unsupported format \"%s\" (json, text)\n", optarg);
                return 2;
            }
            a->json = !strcmp(optarg, "json");
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        case 1: /* a SCENARIO before or between flags */
            if (n_files++)
                extra = extra ? extra : optarg;
            else
                a->path = optarg;
            break;
        case ':':
            fprintf(stderr, "cueue sim: flag %s needs a value\n%s", argv[optind - 1],
                    usage_text);
            return 2;
        default:
            fprintf(stderr, "cueue sim: unknown flag \"%s\"\n%s", argv[optind - 1], usage_text);
            return 2;
        }
    }
    for (; optind < argc; optind++) { /* after `--` */
        if (n_files++)
            extra = extra ? extra : argv[optind];
        else
            a->path = argv[optind];
    }
    if (!n_files) {
        fprintf(stderr, "cueue sim: a SCENARIO file is required\n%s", usage_text);
        return 2;
    }
    if (extra) {
        fprintf(stderr, "cueue sim: one SCENARIO file only (\"%s\", then \"%s\")\n%s", a->path,
                extra, usage_text);
        return 2;
    }
    return -1;
}

static void print_summary(struct sim *s, const struct args *a)
{
    json_t *sum = a->json ? sim_observer_summary(s) : sim_observer_summary_for_text(s);
    if (a->json) {
        char *txt = json_dumps(sum, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        printf("%s\n", txt ? txt : "{}");
        free(txt); /* jansson's allocation */
    } else {
        char *txt = sim_summary_text(sum);
        fputs(txt, stdout);
        xfree(txt);
    }
    json_decref(sum);
}

/* `cueue sim` exits right after printing, so it leaves its simulation to
 * the operating system instead of freeing it: the store's retained
 * versions alone are hundreds of thousands of JSON documents, freed one node
 * at a time in about a second for Kueue's baseline scenario. The pointer
 * is kept here, reachable, so leak checkers report nothing; sim_free stays
 * the way to release a simulation (the unit tests use it). */
static struct sim *volatile left_to_exit; /* volatile: a write-only static is optimised away */

static int run(const struct args *a, const struct sim_scenario *sc, FILE *trace)
{
    struct sim_options opt = {
        .until_rel = a->until_rel >= 0 ? a->until_rel : sc->until_rel,
        .trace_out = trace,
        .keep_records = a->check,
        .quiet_warnings = a->quiet,
    };
    struct sim *s = NULL;
    char *err = NULL;
    int rc = sim_new(sc, &opt, &s, &err);
    if (!rc)
        rc = sim_run(s, &err);
    if (trace)
        fflush(trace);
    int status = 0;
    if (rc) {
        fprintf(stderr, "cueue sim: %s\n", err ? err : "failed");
        status = 2;
    } else if (a->check) {
        int failed = sim_check(sc->expect, s->records, s->warnings, stdout);
        status = failed < 0 ? 2 : failed > 0;
    } else {
        print_summary(s, a);
    }
    xfree(err);
    left_to_exit = s;
    return status;
}

int sim_main(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    struct sim_scenario sc;
    char *err = NULL;
    if (sim_scenario_load(a.path, &sc, &err)) {
        fprintf(stderr, "cueue sim: %s\n", err ? err : "cannot read the scenario");
        xfree(err);
        return 2;
    }
    if (a.check && !json_array_size(sc.expect)) {
        fprintf(stderr, "cueue sim: %s: --check needs an `expect` list in the Scenario\n", a.path);
        sim_scenario_release(&sc);
        return 2;
    }
    FILE *trace = NULL;
    struct stat in_st, out_st;
    if (a.trace_path && strcmp(a.path, "-") && stat(a.path, &in_st) == 0 &&
        stat(a.trace_path, &out_st) == 0 && in_st.st_dev == out_st.st_dev &&
        in_st.st_ino == out_st.st_ino) {
        fprintf(stderr, "cueue sim: --trace %s is the scenario file itself; refusing to "
                        "overwrite it\n", a.trace_path);
        sim_scenario_release(&sc);
        return 2;
    }
    if (a.trace_path) {
        trace = fopen(a.trace_path, "w");
        if (!trace) {
            fprintf(stderr, "cueue sim: --trace %s: cannot open for writing (%s)\n",
                    a.trace_path, strerror(errno));
            sim_scenario_release(&sc);
            return 2;
        }
    } else if (!a.summary_only && !a.check) {
        trace = stdout;
    }
    int status = run(&a, &sc, trace);
    if (trace && trace != stdout)
        fclose(trace);
    sim_scenario_release(&sc);
    return status;
}
