/*
 * rest/body.c — kc_json_format: build a JSON request body from a template with typed directives, so
 * names and values taken from users are always escaped (a quote in a name cannot change the
 * document's structure). Writing only — responses are always parsed by the json layer.
 */
#include "rest/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

int kc_json_format(char **ret, size_t *ret_len, kc_error *err, const char *fmt, ...)
{
    if (!ret || !fmt)
        return kc_error_set(err, KC_EINVAL, "kc_json_format: ret and fmt are required");
    kc__buf b = KC__BUF_INIT(0);
    va_list ap;
    va_start(ap, fmt);
    int rc = 0;
    for (const char *p = fmt; *p && rc == 0; p++) {
        if (*p != '%') {
            rc = kc__buf_append_char(&b, *p);
            continue;
        }
        switch (*++p) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            rc = s ? kc__json_append_string(&b, s) : kc__buf_append_str(&b, "null");
            break;
        }
        case 'r': {
            const char *s = va_arg(ap, const char *);
            rc = kc__buf_append_str(&b, s ? s : "null");
            break;
        }
        case 'd':
            rc = kc__buf_printf(&b, "%d", va_arg(ap, int));
            break;
        case 'l':
            rc = kc__buf_printf(&b, "%" PRId64, va_arg(ap, int64_t));
            break;
        case 'b':
            rc = kc__buf_append_str(&b, va_arg(ap, int) ? "true" : "false");
            break;
        case '%':
            rc = kc__buf_append_char(&b, '%');
            break;
        default:
            va_end(ap);
            kc__buf_free(&b);
            return kc_error_set(err, KC_EINVAL, "kc_json_format: unknown directive at offset %zu",
                                (size_t)(p - fmt - 1));
        }
    }
    va_end(ap);
    char *out = rc ? NULL : kc__buf_steal(&b, ret_len);
    if (!out) {
        kc__buf_free(&b);
        rc = rc ? rc : KC_ENOMEM;
        return kc_error_set(err, rc, rc == KC_ETOOLARGE ? "body too large" : "out of memory");
    }
    *ret = out;
    return 0;
}
