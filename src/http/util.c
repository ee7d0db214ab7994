/*
 * util.c — small helpers of the HTTP layer: bounded file reading, base64 decoding (OpenSSL),
 * path resolution relative to a kubeconfig's directory, JSON string writing (for
 * KUBERNETES_EXEC_INFO; writing only — parsing always goes through the json layer) and RFC 3339
 * timestamps (exec credential expiry).
 */
#include "http/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int kc__read_file(const char *path, size_t max, char **ret, size_t *ret_len, kc_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return kc_error_set(err, KC_EIO, "cannot read %s: %s", path, strerror(errno));
    kc__buf b = KC__BUF_INIT(max);
    int rc = kc__buf_reserve(&b, 4096);
    while (rc == 0) {
        char chunk[16384];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = kc_error_set(err, KC_EIO, "cannot read %s: %s", path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        rc = kc__buf_append(&b, chunk, (size_t)n);
        if (rc == KC_ETOOLARGE)
            rc = kc_error_set(err, rc, "%s is larger than %zu bytes", path, max);
        else if (rc)
            rc = kc_error_set(err, rc, "out of memory reading %s", path);
    }
    close(fd);
    if (rc) {
        kc__buf_free(&b);
        return rc;
    }
    char *data = kc__buf_steal(&b, ret_len);
    if (!data)
        return kc_error_set(err, KC_ENOMEM, "out of memory");
    *ret = data;
    return 0;
}

int kc__base64_decode(const char *in, size_t len, char **ret, size_t *ret_len)
{
    char *clean = malloc(len + 1);
    if (!clean)
        return KC_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (in[i] != ' ' && in[i] != '\n' && in[i] != '\r' && in[i] != '\t')
            clean[n++] = in[i];
    if (n % 4 != 0 || n > (size_t)INT32_MAX) {
        free(clean);
        return KC_EINVAL;
    }
    char *out = malloc(n / 4 * 3 + 1);
    if (!out) {
        free(clean);
        return KC_ENOMEM;
    }
    int m = n ? EVP_DecodeBlock((unsigned char *)out, (unsigned char *)clean, (int)n) : 0;
    if (m < 0) {
        free(clean);
        free(out);
        return KC_EINVAL;
    }
    /* EVP_DecodeBlock counts padding bytes as zeros: drop them. */
    if (n >= 1 && clean[n - 1] == '=')
        m--;
    if (n >= 2 && clean[n - 2] == '=')
        m--;
    free(clean);
    out[m] = '\0';
    *ret = out;
    *ret_len = (size_t)m;
    return 0;
}

char *kc__path_resolve(const char *dir, const char *path)
{
    if (!path)
        return NULL;
    if (path[0] == '/' || !dir || !*dir)
        return kc__strdup(path);
    char *r = NULL;
    if (asprintf(&r, "%s/%s", dir, path) < 0)
        return NULL;
    return r;
}

int kc__json_append_string(kc__buf *b, const char *s)
{
    int rc = kc__buf_append_char(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; rc == 0 && *p; p++) {
        switch (*p) {
        case '"':
            rc = kc__buf_append_str(b, "\\\"");
            break;
        case '\\':
            rc = kc__buf_append_str(b, "\\\\");
            break;
        case '\n':
            rc = kc__buf_append_str(b, "\\n");
            break;
        case '\r':
            rc = kc__buf_append_str(b, "\\r");
            break;
        case '\t':
            rc = kc__buf_append_str(b, "\\t");
            break;
        default:
            if (*p < 0x20)
                rc = kc__buf_printf(b, "\\u%04x", *p);
            else
                rc = kc__buf_append_char(b, (char)*p);
        }
    }
    return rc ? rc : kc__buf_append_char(b, '"');
}

/* YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM) */
bool kc__parse_rfc3339(const char *s, int64_t *ret_ms)
{
    struct tm tm = {0};
    int n = 0;
    if (sscanf(s, "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
        n < 19)
        return false;
    const char *p = s + n;
    int64_t ms = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*p - '0');
        if (digits == 0)
            return false;
        for (; digits < 3; digits++)
            ms *= 10;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return false;
        off = (int64_t)(hh * 3600 + mm * 60) * (*p == '+' ? 1 : -1);
        p += 6;
    } else {
        return false;
    }
    if (*p)
        return false;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return false;
    *ret_ms = ((int64_t)t - off) * 1000 + ms;
    return true;
}
