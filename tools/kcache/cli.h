/* cli.h — subcommand registry of the kcache CLI (see main.c). */
#ifndef KC_CLI_H
#define KC_CLI_H

typedef struct kc__cli_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit status */
} kc__cli_cmd;

void kc__cli_register(const char *name, const char *summary, int (*run)(int, char **));

/* Use once per command file: KC_CLI_COMMAND(serve, "run the in-memory API server", cmd_serve) */
#define KC_CLI_COMMAND(name, summary, fn)                                                          \
    __attribute__((constructor)) static void kc__cli_reg_##name(void)                              \
    {                                                                                              \
        kc__cli_register(#name, summary, fn);                                                      \
    }

#endif
