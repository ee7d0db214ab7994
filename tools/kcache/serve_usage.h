/*
 * serve_usage.h — `kcache serve --help` (serve_usage.c).
 */
#ifndef KC_CLI_SERVE_USAGE_H
#define KC_CLI_SERVE_USAGE_H

/* The whole help text, NUL-terminated, printed as is. */
extern const char kc__serve_usage_text[];

#endif
