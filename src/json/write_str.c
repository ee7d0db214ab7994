/*
 * write_str.c — a JSON string into a kc__buf (json/write_str.h): runs of plain bytes copied at
 * once, the escapes RFC 8259 requires written as jansson writes them (short forms for \b \f \n \r
 * \t, \u00XX for the other controls), nothing else escaped.
 */
#include "json/write_str.h"

#include <stdio.h>

const char *kc__json_escape_byte(unsigned char c, char buf[static 7])
{
    const char *e = c == '"'    ? "\\\""
                    : c == '\\' ? "\\\\"
                    : c == '\n' ? "\\n"
                    : c == '\t' ? "\\t"
                    : c == '\r' ? "\\r"
                    : c == '\b' ? "\\b"
                    : c == '\f' ? "\\f"
                                : NULL;
    if (e)
        return e;
    snprintf(buf, 7, "\\u%04x", c);
    return buf;
}

int kc__json_buf_string(kc__buf *b, const char *s, size_t n)
{
    int r = kc__buf_append_char(b, '"');
    size_t i = 0;
    while (!r && i < n) {
        size_t run = i;
        while (run < n && kc__json_plain((unsigned char)s[run]))
            run++;
        r = kc__buf_append(b, s + i, run - i);
        if (r || run == n)
            break;
        char u[7];
        r = kc__buf_append_str(b, kc__json_escape_byte((unsigned char)s[run], u));
        i = run + 1;
    }
    return r ? r : kc__buf_append_char(b, '"');
}
