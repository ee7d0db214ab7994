/*
 * kcache — command-line entry point. Each subcommand lives in its own file (cmd_<name>.c) and
 * registers itself from a constructor with kc__cli_register(), so adding a command touches no
 * shared file. `kcache --help` lists what is registered.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "kcache/common.h"

#define KC_CLI_MAX 32
static kc__cli_cmd cmds[KC_CLI_MAX];
static int n_cmds;

void kc__cli_register(const char *name, const char *summary, int (*run)(int, char **))
{
    if (n_cmds < KC_CLI_MAX)
        cmds[n_cmds++] = (kc__cli_cmd){name, summary, run};
}

static void usage(FILE *f)
{
    fprintf(f, "kcache %s — a correct, fast, lean local cache of Kubernetes API objects\n\n"
               "Usage: kcache <command> [options]   (kcache <command> --help for details)\n\n"
               "Commands:\n",
            kc_version());
    for (int i = 0; i < n_cmds; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "  %-10s %s\n", "version", "print the version");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("kcache %s\n", kc_version());
        return 0;
    }
    for (int i = 0; i < n_cmds; i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "kcache: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
