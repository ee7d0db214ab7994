/*
 * core/internal.h — library-internal helpers shared by every subsystem (prefix kc__).
 * Not installed. Include as "core/internal.h".
 */
#ifndef KC_CORE_INTERNAL_H
#define KC_CORE_INTERNAL_H

#include "kcache/error.h"

#include <stdarg.h>

/* kc_error_set with a va_list. Returns code. err may be NULL. */
int kc__error_vset(kc_error *err, int code, const char *fmt, va_list ap);

#endif
