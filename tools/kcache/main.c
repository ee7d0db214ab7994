/*
 * kcache — command-line entry point. Each subcommand lives in its own file (cmd_<name>.c) and
 * registers itself from a constructor with kc__cli_register(), so adding a command touches no
 * shared file. `kcache --help` lists what is registered; `kcache help CMD` is `kcache CMD --help`.
 * Every command takes -h/--help, reports bad arguments in one format (cli_util.c) and exits
 * 0 (success), 1 (failure) or 2 (bad arguments). kubectl's global flags may precede the command
 * (kcache --kubeconfig F -n NS get pods): they are moved after it (cli_util.c) and the command
 * parses them as its own.
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
    fprintf(f,
            "kcache %s — a correct, fast, lean local cache of Kubernetes API objects\n\n"
            "Usage: kcache [global flags] <command> [options]   (kcache help <command>)\n\n"
            "Commands:\n",
            kc_version());
    for (int i = 0; i < n_cmds; i++)
        fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "  %-10s %s\n", "help", "help of a command (kcache help get)");
    fprintf(f, "  %-10s %s\n", "version", "print the version");
    fprintf(f, "\nGlobal flags (before or after the command, as kubectl takes them):\n"
               "  -n, --namespace NS, --kubeconfig PATH, --context NAME, --request-timeout T\n"
               "\nExit status: 0 success, 1 failure, 2 bad arguments.\n");
}

static bool is_help(const char *a)
{
    return !strcmp(a, "--help") || !strcmp(a, "-h");
}

static const kc__cli_cmd *find(const char *name)
{
    for (int i = 0; i < n_cmds; i++)
        if (!strcmp(name, cmds[i].name))
            return &cmds[i];
    return NULL;
}

static int cmd_version(int argc, char **argv)
{
    if (argc > 1 && is_help(argv[1])) {
        printf("Usage: kcache version\n\nPrints \"kcache VERSION\".\n");
        return 0;
    }
    if (argc > 1)
        return kc__cli_usage_error("version", "%s: unexpected argument", argv[1]);
    printf("kcache %s\n", kc_version());
    return 0;
}

/* kcache help [CMD]: the command's own --help. */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2 || is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (argc > 2)
        return kc__cli_usage_error("help", "%s: unexpected argument", argv[2]);
    char help[] = "--help";
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "help")) {
        char *av[] = {argv[1], help, NULL};
        return strcmp(argv[1], "help") ? cmd_version(2, av) : cmd_help(2, av);
    }
    const kc__cli_cmd *c = find(argv[1]);
    if (!c)
        return kc__cli_usage_error("help", "%s: unknown command", argv[1]);
    char *av[] = {(char *)c->name, help, NULL};
    return c->run(2, av);
}

int main(int argc, char **argv)
{
    int hoisted = kc__cli_hoist_globals(argc, argv);
    if (hoisted)
        return hoisted;
    if (argc < 2) {
        usage(stderr);
        return KC_CLI_EXIT_USAGE;
    }
    if (is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "help"))
        return cmd_help(argc - 1, argv + 1);
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))
        return cmd_version(argc - 1, argv + 1);
    const kc__cli_cmd *c = find(argv[1]);
    if (!c)
        return kc__cli_usage_error(NULL, "%s: unknown command", argv[1]);
    kc__cli_log_init(false);
    if (kc__cli_check_cpu() != 0)
        return 1;
    return c->run(argc - 1, argv + 1);
}
