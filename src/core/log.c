/*
 * log.c — formatting of the library's log messages, and secret redaction.
 *
 * kc__log formats a message into a bounded stack buffer and hands it to the process's sink
 * (core/log_sink.c: kc_log_write, which redacts it and calls the installed callback); nothing here
 * writes anywhere or keeps state, so libkcache-server can carry a private copy of this file's
 * neighbours without a second sink (tests/packaging/check_symbols.sh). Redaction is a single
 * left-to-right scan that copies the text and replaces secret values with "***"; see internal.h
 * for the rules.
 */
#include "core/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- level ----------------------------------------------------------------------------------- */

int kc__log_level_parse(const char *s)
{
    static const struct {
        const char *name;
        int level;
    } names[] = {
        {"error", KC_LOG_LEVEL_ERROR},
        {"warn", KC_LOG_LEVEL_WARN},
        {"warning", KC_LOG_LEVEL_WARN},
        {"info", KC_LOG_LEVEL_INFO},
        {"debug", KC_LOG_LEVEL_DEBUG},
        {"off", -1},
        {"none", -1},
    };
    if (!s || !*s)
        return -1;
    if (s[0] >= '0' && s[0] <= '3' && s[1] == '\0')
        return s[0] - '0';
    for (size_t i = 0; i < KC__ARRAY_LEN(names); i++)
        if (strcasecmp(s, names[i].name) == 0)
            return names[i].level;
    return KC_LOG_LEVEL_WARN;
}

/* ---- formatting ------------------------------------------------------------------------------ */

#define LOG_LINE_MAX 8192

void kc__vlog(kc_log_level level, const char *subsys, const char *fmt, va_list ap)
{
    if (!kc_log_enabled(level))
        return;
    char msg[LOG_LINE_MAX];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    while (len && msg[len - 1] == '\n')
        msg[--len] = '\0';
    kc_log_write(level, subsys, msg);
}

void kc__log(kc_log_level level, const char *subsys, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kc__vlog(level, subsys, fmt, ap);
    va_end(ap);
}

/* ---- redaction ------------------------------------------------------------------------------- */

#define MASK "***"

/* Case-insensitive: does s[i..] start with word? */
static bool at_word(const char *s, size_t len, size_t i, const char *word)
{
    size_t n = strlen(word);
    return len - i >= n && strncasecmp(s + i, word, n) == 0;
}

static bool is_value_end(char c)
{
    return isspace((unsigned char)c) || c == '&' || c == ',' || c == ';' || c == '"' || c == '\'';
}

/* Each matcher looks at s[i..]: on a match it returns true and sets *keep (bytes from i copied
 * verbatim, then MASK) and *end (index where verbatim copying resumes). */

/* "Authorization:" — mask the rest of the line. */
static bool match_auth_header(const char *s, size_t len, size_t i, size_t *keep, size_t *end)
{
    static const char *const hdrs[] = {"proxy-authorization:", "authorization:"};
    for (size_t h = 0; h < KC__ARRAY_LEN(hdrs); h++) {
        if (!at_word(s, len, i, hdrs[h]))
            continue;
        size_t j = i + strlen(hdrs[h]);
        while (j < len && (s[j] == ' ' || s[j] == '\t'))
            j++;
        size_t e = j;
        while (e < len && s[e] != '\r' && s[e] != '\n')
            e++;
        if (e == j)
            return false;
        *keep = j - i;
        *end = e;
        return true;
    }
    return false;
}

/* "Bearer <token>" — mask the token. */
static bool match_bearer(const char *s, size_t len, size_t i, size_t *keep, size_t *end)
{
    if (!at_word(s, len, i, "bearer ") || (i > 0 && isalnum((unsigned char)s[i - 1])))
        return false;
    size_t j = i + 7;
    while (j < len && s[j] == ' ')
        j++;
    size_t e = j;
    while (e < len && !is_value_end(s[e]))
        e++;
    if (e == j)
        return false;
    *keep = j - i;
    *end = e;
    return true;
}

/* key[" ']?[ ]*(=|:)[ ]*["']?value — mask the value. */
static bool match_key_value(const char *s, size_t len, size_t i, size_t *keep, size_t *end)
{
    static const char *const keys[] = {"password", "passwd", "token", "secret", "client-key-data"};
    for (size_t k = 0; k < KC__ARRAY_LEN(keys); k++) {
        if (!at_word(s, len, i, keys[k]))
            continue;
        size_t j = i + strlen(keys[k]);
        if (j < len && (s[j] == '"' || s[j] == '\''))
            j++;
        while (j < len && s[j] == ' ')
            j++;
        if (j >= len || (s[j] != '=' && s[j] != ':'))
            continue;
        j++;
        while (j < len && s[j] == ' ')
            j++;
        char quote = 0;
        if (j < len && (s[j] == '"' || s[j] == '\''))
            quote = s[j++];
        size_t e = j;
        if (quote) {
            while (e < len && s[e] != quote && s[e] != '\n')
                e++;
        } else {
            while (e < len && !is_value_end(s[e]))
                e++;
        }
        if (e == j)
            continue;
        *keep = j - i;
        *end = e;
        return true;
    }
    return false;
}

/* scheme://user:password@host — mask the password. */
static bool match_userinfo(const char *s, size_t len, size_t i, size_t *keep, size_t *end)
{
    if (!at_word(s, len, i, "://"))
        return false;
    size_t colon = 0, at = 0;
    for (size_t k = i + 3; k < len; k++) {
        char c = s[k];
        if (c == '/' || c == '?' || c == '#' || isspace((unsigned char)c))
            break;
        if (c == ':' && !colon)
            colon = k;
        if (c == '@')
            at = k;
    }
    if (!colon || !at || at <= colon + 1)
        return false;
    *keep = colon + 1 - i;
    *end = at;
    return true;
}

int kc__redact_buf(const char *s, size_t len, kc__buf *out)
{
    size_t i = 0, plain = 0; /* s[plain..i) is pending verbatim text */
    while (i < len) {
        size_t keep = 0, end = 0;
        if (!match_auth_header(s, len, i, &keep, &end) && !match_bearer(s, len, i, &keep, &end) &&
            !match_key_value(s, len, i, &keep, &end) && !match_userinfo(s, len, i, &keep, &end)) {
            i++;
            continue;
        }
        int rc = kc__buf_append(out, s + plain, i + keep - plain);
        if (rc == 0)
            rc = kc__buf_append_str(out, MASK);
        if (rc < 0)
            return rc;
        i = plain = end;
    }
    return kc__buf_append(out, s + plain, len - plain);
}

char *kc__redact(const char *line)
{
    if (!line)
        return NULL;
    kc__buf b = KC__BUF_INIT(0);
    size_t n = strlen(line);
    if (kc__buf_reserve(&b, n + 16) < 0 || kc__redact_buf(line, n, &b) < 0) {
        kc__buf_free(&b);
        return NULL;
    }
    return kc__buf_steal(&b, NULL);
}
