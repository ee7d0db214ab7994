/*
 * get_yaml.c — YAML output of `kcache get -o yaml` through libyaml's emitter (never hand-written
 * YAML): a jansson tree becomes block mappings and sequences, keys sorted bytewise as kubectl
 * sorts them.
 *
 * Scalars keep their type for every YAML reader:
 *   - a string that a reader would take for something else — null/~, a YAML 1.1 boolean (y, no,
 *     on, Off…), a number in any YAML 1.1/1.2 spelling (017, 0x1F, 0o7, 1_000, 1:20, .inf), a
 *     timestamp, "=" or "<<" — is double-quoted (kubectl leaves "=" and "<<" plain, which PyYAML
 *     cannot read back); libyaml adds the quotes plain style cannot do without (leading "- ",
 *     ": ", " #", spaces at the ends, control characters…);
 *   - multi-line strings are literal blocks (|, |-) where libyaml allows them; kept trailing line
 *     breaks (|+, after which libyaml ends the document with "..."), \r, NEL, U+2028 and U+2029
 *     (line breaks to YAML 1.1 only) are escaped in double quotes instead;
 *   - numbers are Go's shortest form, an exponent float with a '.' (1.0e-9) so YAML 1.1 readers
 *     see a number.
 */
#include "get.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct get_yaml {
    yaml_emitter_t em;
    bool failed;
};

static bool all_in(const char *s, size_t n, const char *set)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr(set, s[i]))
            return false;
    return true;
}

/* [0-9_]* '.' [0-9_]* ([eE][-+]?[0-9]+)?  or  [0-9_]+ [eE][-+]?[0-9]+ (s starts with a digit or
 * '.'), as YAML 1.1 and 1.2 floats. */
static bool looks_float(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    for (; i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'); i++)
        digits++;
    bool dot = i < n && s[i] == '.';
    if (dot)
        for (i++; i < n && (isdigit((unsigned char)s[i]) || s[i] == '_'); i++)
            digits++;
    if (i == n)
        return dot && digits;
    if (s[i] != 'e' && s[i] != 'E')
        return false;
    i++;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    return digits && all_in(s + i, n - i, "0123456789");
}

/* 1:20, 190:20:30.15 — YAML 1.1 sexagesimal numbers. */
static bool looks_sexagesimal(const char *s, size_t n)
{
    const char *colon = memchr(s, ':', n);
    return colon && all_in(s, (size_t)(colon - s), "0123456789_") &&
           all_in(colon, n - (size_t)(colon - s), "0123456789_:.");
}

/* Count the digits at s[*i] (at most max), advancing *i. */
static size_t digits_at(const char *s, size_t n, size_t *i, size_t max)
{
    size_t d = 0;
    while (*i < n && d < max && isdigit((unsigned char)s[*i])) {
        (*i)++;
        d++;
    }
    return d;
}

/* A YAML 1.1 timestamp: 2001-12-14, or 2001-12-14t21:59:43.10-05:00 and its variants. */
static bool looks_timestamp(const char *s, size_t n)
{
    size_t i = 0;
    if (digits_at(s, n, &i, 4) != 4 || i >= n || s[i++] != '-')
        return false;
    size_t mo = digits_at(s, n, &i, 2);
    if (!mo || i >= n || s[i++] != '-')
        return false;
    size_t dd = digits_at(s, n, &i, 2);
    if (!dd)
        return false;
    if (i == n)
        return mo == 2 && dd == 2;
    if (s[i] == 'T' || s[i] == 't')
        i++;
    else if (s[i] == ' ' || s[i] == '\t')
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
            i++;
    else
        return false;
    if (!digits_at(s, n, &i, 2) || i >= n || s[i++] != ':' || digits_at(s, n, &i, 2) != 2 ||
        i >= n || s[i++] != ':' || digits_at(s, n, &i, 2) != 2)
        return false;
    if (i < n && s[i] == '.') {
        i++;
        digits_at(s, n, &i, n);
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    if (i < n && s[i] == 'Z')
        return i + 1 == n;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        i++;
        if (!digits_at(s, n, &i, 2))
            return false;
        if (i < n && s[i] == ':') {
            i++;
            if (digits_at(s, n, &i, 2) != 2)
                return false;
        }
    }
    return i == n;
}

/* Would a YAML reader (1.1 or 1.2) take this plain scalar for something other than a string? */
static bool yaml_ambiguous(const char *s, size_t n)
{
    static const char *const words[] = {"~",    "null", "Null", "NULL",  "y",     "Y",     "yes",
                                        "Yes",  "YES",  "n",    "N",     "no",    "No",    "NO",
                                        "true", "True", "TRUE", "false", "False", "FALSE", "on",
                                        "On",   "ON",   "off",  "Off",   "OFF",   "=",     "<<",
                                        ".inf", ".Inf", ".INF", ".nan",  ".NaN",  ".NAN",  NULL};
    if (n == 0 || memchr(s, '\0', n))
        return true;
    for (const char *const *w = words; *w; w++)
        if (strlen(*w) == n && !memcmp(*w, s, n))
            return true;
    const char *t = s;
    if (*t == '-' || *t == '+')
        t++;
    size_t m = n - (size_t)(t - s);
    if (m == 0)
        return false;
    if (m == 4 && (!memcmp(t, ".inf", 4) || !memcmp(t, ".Inf", 4) || !memcmp(t, ".INF", 4)))
        return true;
    if (!isdigit((unsigned char)t[0]) && !(t[0] == '.' && m > 1 && isdigit((unsigned char)t[1])))
        return false;
    if (m > 2 && t[0] == '0' && strchr("xXoObB", t[1]))
        return all_in(t + 2, m - 2, "0123456789abcdefABCDEF_");
    return all_in(t, m, "0123456789_") || looks_float(t, m) || looks_sexagesimal(t, m) ||
           looks_timestamp(t, m);
}

/* Emit ev (initialised when ok). Once the emitter failed, every later event is dropped. */
static int y_emit(get_yaml *d, yaml_event_t *ev, int ok)
{
    if (ok && d->failed)
        yaml_event_delete(ev);
    if (!ok || d->failed || !yaml_emitter_emit(&d->em, ev)) {
        d->failed = true;
        return -1;
    }
    return 0;
}

static yaml_scalar_style_t string_style(const char *s, size_t n)
{
    if (yaml_ambiguous(s, n))
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    /* \r, NEL, LS and PS are line breaks to YAML 1.1, content to 1.2: escape them */
    if (memchr(s, '\r', n) || memmem(s, n, "\xc2\x85", 2) || memmem(s, n, "\xe2\x80\xa8", 3) ||
        memmem(s, n, "\xe2\x80\xa9", 3))
        return YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    if (!memchr(s, '\n', n))
        return YAML_ANY_SCALAR_STYLE; /* plain, or the quotes libyaml finds necessary */
    size_t trailing = 0;
    while (trailing < n && s[n - 1 - trailing] == '\n')
        trailing++;
    /* A literal block as kubectl prints it, but not "|+" (kept trailing line breaks): after
     * one, libyaml ends the document with "...". Those strings are double-quoted instead. */
    return trailing <= 1 && trailing < n ? YAML_LITERAL_SCALAR_STYLE
                                         : YAML_DOUBLE_QUOTED_SCALAR_STYLE;
}

static int y_scalar(get_yaml *d, const char *s, size_t n, bool is_string)
{
    yaml_event_t ev;
    yaml_scalar_style_t style = is_string ? string_style(s, n) : YAML_PLAIN_SCALAR_STYLE;
    return y_emit(
        d, &ev,
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)n, 1, 1, style));
}

int get_yaml_value(get_yaml *d, json_t *v)
{
    char num[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n;
        const char **keys = get_sorted_keys(v, &n);
        if (n && !keys)
            return -1;
        int rc = get_yaml_map(d, true);
        for (size_t i = 0; i < n && !rc; i++) {
            rc = y_scalar(d, keys[i], strlen(keys[i]), true);
            rc = rc ? rc : get_yaml_value(d, json_object_get(v, keys[i]));
        }
        free(keys);
        return rc ? rc : get_yaml_map(d, false);
    }
    case JSON_ARRAY: {
        int rc = get_yaml_seq(d, true);
        for (size_t i = 0; i < json_array_size(v) && !rc; i++)
            rc = get_yaml_value(d, json_array_get(v, i));
        return rc ? rc : get_yaml_seq(d, false);
    }
    case JSON_STRING:
        return y_scalar(d, json_string_value(v), json_string_length(v), true);
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return y_scalar(d, num, strlen(num), false);
    case JSON_REAL: {
        get_format_real(num, sizeof num, json_real_value(v));
        /* YAML 1.1 readers (PyYAML) need a '.' in an exponent float: 1e-9 → 1.0e-9 */
        char *e = strchr(num, 'e');
        if (e && !memchr(num, '.', (size_t)(e - num)) && strlen(num) + 3 < sizeof num) {
            memmove(e + 2, e, strlen(e) + 1);
            memcpy(e, ".0", 2);
        }
        return y_scalar(d, num, strlen(num), false);
    }
    case JSON_TRUE:
        return y_scalar(d, "true", 4, false);
    case JSON_FALSE:
        return y_scalar(d, "false", 5, false);
    case JSON_NULL:
        return y_scalar(d, "null", 4, false);
    }
    return 0;
}

int get_yaml_str(get_yaml *d, const char *k)
{
    return y_scalar(d, k, strlen(k), true);
}

int get_yaml_map(get_yaml *d, bool start)
{
    yaml_event_t ev;
    return start ? y_emit(d, &ev,
                          yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                                              YAML_BLOCK_MAPPING_STYLE))
                 : y_emit(d, &ev, yaml_mapping_end_event_initialize(&ev));
}

int get_yaml_doc(get_yaml *d, bool start)
{
    yaml_event_t ev;
    return start ? y_emit(d, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1))
                 : y_emit(d, &ev, yaml_document_end_event_initialize(&ev, 1));
}

get_yaml *get_yaml_new(FILE *out)
{
    get_yaml *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    if (!yaml_emitter_initialize(&d->em)) {
        free(d);
        return NULL;
    }
    yaml_emitter_set_output_file(&d->em, out);
    yaml_emitter_set_unicode(&d->em, 1);
    yaml_event_t ev;
    if (y_emit(d, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING))) {
        get_yaml_free(d);
        return NULL;
    }
    return d;
}

int get_yaml_seq(get_yaml *d, bool start)
{
    yaml_event_t ev;
    return start ? y_emit(d, &ev,
                          yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                                               YAML_BLOCK_SEQUENCE_STYLE))
                 : y_emit(d, &ev, yaml_sequence_end_event_initialize(&ev));
}

int get_yaml_free(get_yaml *d)
{
    if (!d)
        return 0;
    yaml_event_t ev;
    int rc = d->failed ? -1 : y_emit(d, &ev, yaml_stream_end_event_initialize(&ev));
    yaml_emitter_delete(&d->em);
    free(d);
    return rc;
}
