/*
 * enrich_mmx.c — the exchange on stdin/stdout: rsyslog's mmexternal protocol, or a JSON-lines
 * filter.
 *
 * mmexternal (spec MX4–MX11, rsyslog plugins/mmexternal/mmexternal.c): each input line is the
 * fulljson form of one message; each gets exactly one reply line, in input order: {} (no change)
 * or {"$!":{"kubernetes":{…},"docker":{…}}} with complete objects, since rsyslog merges "$!" one
 * level deep (MX6). A line that is not a JSON object, names no pod, or is longer than max_line
 * is answered {} (the message passes unchanged) and counted; reading resumes after its LF, so
 * memory stays bounded by max_line whatever arrives. Replies are written by jansson in compact
 * form (a '\n' in a string is escaped), so line framing holds. Replies are flushed before every
 * wait for input: rsyslog sends the next line only after reading the reply (MX7), so each reply
 * goes out at once, while a piped batch is answered in large writes.
 *
 * Filter mode (no --mmexternal): each line is a record; the output line is that record with the
 * fields merged at its top level ("kubernetes", …), or the line unchanged.
 *
 * Signals: the caller blocks SIGTERM/SIGINT; ppoll unblocks them only while waiting for input,
 * so a signal ends the loop promptly and never interrupts a half-written reply. EOF ends it with
 * 0. Nothing is printed here: the caller decides where statistics go (never stderr under
 * mmexternal, MX2).
 */
#include "enrich.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kcache/error.h"

static char *dup_line(const char *s, size_t n)
{
    char *r = malloc(n + 1);
    if (r) {
        memcpy(r, s, n);
        r[n] = '\0';
    }
    return r;
}

static int64_t coarse_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The stamp answers are held at (enrich_reuse.c): false when the view has none now. */
static bool stamp_now(kc__enrich_loop *l, uint64_t *ret)
{
    if (l->view.stamp)
        return l->view.stamp(l->view.ud, ret);
    if (l->view.generation) {
        *ret = atomic_load_explicit(l->view.generation, memory_order_acquire);
        return true;
    }
    return false;
}

static void count(kc__enrich_loop *l, int rc)
{
    if (!rc)
        l->stats.enriched++;
    else
        l->stats.file_only++;
    if (rc && rc != KC_ENOTFOUND)
        l->stats.lookup_errors++;
}

/* The reply for rec given the fields to add (NULL: none). */
static char *render(kc__enrich_loop *l, json_t *rec, json_t *add, const char *line, size_t len)
{
    char *r = NULL;
    if (l->mmexternal) {
        json_t *reply = json_object();
        if (add)
            json_object_set(reply, "$!", add);
        r = json_dumps(reply, JSON_COMPACT);
        json_decref(reply);
    } else if (add) {
        json_object_update(rec, add);
        r = json_dumps(rec, JSON_COMPACT);
    } else {
        r = dup_line(line, len);
    }
    return r;
}

/* Look key up (or reuse what the answer cache holds) and render the reply. */
static char *answer_key(kc__enrich_loop *l, json_t *rec, const kc__enrich_key *key,
                        const char *line, size_t len)
{
    uint64_t stamp = 0;
    bool tracked = l->view.lookup && stamp_now(l, &stamp);
    if (tracked && !l->reuse)
        l->reuse = kc__enrich_reuse_new();
    const kc__enrich_answer *held = tracked ? kc__enrich_reuse_get(l->reuse, key, stamp) : NULL;
    if (held) {
        count(l, held->rc);
        l->reused++;
        if (l->mmexternal)
            return dup_line(held->reply, held->reply_len);
        return render(l, rec, held->add, line, len);
    }
    kc__enrich_meta meta = {0};
    int rc = l->view.lookup ? l->view.lookup(l->view.ud, key, &meta) : KC_ENOTFOUND;
    count(l, rc);
    json_t *add = kc__enrich_format(l->out, key, rc ? NULL : &meta);
    kc__enrich_meta_clear(&meta);
    char *r = render(l, rec, add, line, len);
    if (tracked && r && (!rc || rc == KC_ENOTFOUND)) {
        kc__enrich_answer a = {.rc = rc, .add = add};
        if (l->mmexternal) {
            a.reply = r;
            a.reply_len = strlen(r);
        }
        kc__enrich_reuse_put(l->reuse, key, stamp, &a);
    }
    json_decref(add);
    return r;
}

char *kc__enrich_reply(kc__enrich_loop *l, const char *line, size_t len)
{
    l->stats.lines++;
    kc__enrich_key key;
    if (l->mmexternal) { /* only the key's fields are needed: the projection (enrich_project.c) */
        char id[1024];
        size_t idn = 0;
        json_t *few = kc__enrich_record_fields(l->fields, line, len, id, sizeof id, &idn);
        int64_t now = idn && l->reuse ? coarse_ms() : -1; /* the key memo (enrich_reuse.c) */
        bool have = few && now >= 0 && !kc__enrich_reuse_key_get(l->reuse, id, idn, now, &key);
        if (few && !have && !kc__enrich_record_key(l->fmt, l->fields, few, &key)) {
            have = true;
            kc__enrich_reuse_key_put(l->reuse, id, idn, now, &key);
        }
        if (have) {
            char *r = answer_key(l, few, &key, line, len);
            json_decref(few);
            return r ? r : dup_line("{}", 2);
        }
        json_decref(few);
    }
    json_error_t jerr;
    json_t *rec = json_loadb(line, len, JSON_ALLOW_NUL, &jerr);
    if (!json_is_object(rec)) {
        l->stats.malformed++;
        json_decref(rec);
        return l->mmexternal ? dup_line("{}", 2) : dup_line(line, len);
    }
    char *r;
    if (kc__enrich_record_key(l->fmt, l->fields, rec, &key)) {
        l->stats.no_match++;
        r = l->mmexternal ? dup_line("{}", 2) : dup_line(line, len);
    } else {
        r = answer_key(l, rec, &key, line, len);
    }
    json_decref(rec);
    return r ? r : dup_line("{}", 2);
}

void kc__enrich_loop_release(kc__enrich_loop *l)
{
    kc__enrich_reuse_free(l->reuse);
    l->reuse = NULL;
}

typedef struct obuf {
    char *p;
    size_t len, cap;
} obuf;

static int obuf_add(obuf *o, const char *s, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        size_t cap = o->cap ? o->cap : 65536;
        while (cap < o->len + n + 1)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p)
            return -1;
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->p[o->len + n] = '\n';
    o->len += n + 1;
    return 0;
}

static int obuf_flush(obuf *o, int fd)
{
    size_t off = 0;
    while (off < o->len) {
        ssize_t w = write(fd, o->p + off, o->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    o->len = 0;
    if (o->cap > (1u << 20)) { /* give a burst's memory back */
        free(o->p);
        o->p = NULL;
        o->cap = 0;
    }
    return 0;
}

static int answer(kc__enrich_loop *l, obuf *o, const char *line, size_t n, bool too_long)
{
    char *r;
    if (too_long) {
        l->stats.lines++;
        l->stats.too_long++;
        r = l->mmexternal ? dup_line("{}", 2) : dup_line(line, n);
    } else {
        r = kc__enrich_reply(l, line, n);
    }
    int rc = r ? obuf_add(o, r, strlen(r)) : obuf_add(o, "{}", 2);
    free(r);
    return rc;
}

typedef struct ibuf {
    char *p;
    size_t len, cap;
    bool skipping; /* inside a line longer than max_line: dropped up to its LF */
} ibuf;

/* Answer every complete line of in; keep the partial one (or start skipping it). */
static int drain_lines(kc__enrich_loop *l, ibuf *in, obuf *o)
{
    size_t start = 0;
    while (start < in->len && !(l->stop && *l->stop)) {
        char *nl = memchr(in->p + start, '\n', in->len - start);
        if (!nl)
            break;
        size_t n = (size_t)(nl - (in->p + start));
        bool too_long = in->skipping || n > l->max_line;
        if (answer(l, o, in->p + start, too_long ? 0 : n, too_long))
            return -1;
        in->skipping = false;
        start += n + 1;
    }
    if (start) { /* keep the partial line (none read yet: p is NULL) */
        memmove(in->p, in->p + start, in->len - start);
        in->len -= start;
    }
    if (in->len > l->max_line) {
        in->skipping = true;
        in->len = 0;
    }
    return 0;
}

static int wait_input(kc__enrich_loop *l)
{
    sigset_t open;
    sigemptyset(&open);
    struct pollfd p = {.fd = l->in_fd, .events = POLLIN};
    for (;;) {
        if (l->stop && *l->stop)
            return 1;
        int r = ppoll(&p, 1, NULL, &open);
        if (r > 0)
            return 0;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

int kc__enrich_run(kc__enrich_loop *l)
{
    ibuf in = {0};
    obuf out = {0};
    int rc = 0;
    for (;;) {
        if (drain_lines(l, &in, &out) || obuf_flush(&out, l->out_fd)) {
            rc = -1;
            break;
        }
        int w = wait_input(l);
        if (w) {
            rc = w < 0 ? -1 : 0;
            break;
        }
        if (in.cap - in.len < 65536) {
            size_t cap = in.cap ? in.cap * 2 : 65536 * 2;
            if (cap > l->max_line + 65536 * 2)
                cap = l->max_line + 65536 * 2;
            char *p = cap > in.cap ? realloc(in.p, cap) : in.p;
            if (!p) {
                rc = -1;
                break;
            }
            in.p = p;
            in.cap = cap;
        }
        ssize_t r = read(l->in_fd, in.p + in.len, in.cap - in.len);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0) { /* EOF: a last line without LF is answered too */
            if (r == 0 && in.len && !in.skipping && answer(l, &out, in.p, in.len, false) == 0)
                rc = obuf_flush(&out, l->out_fd);
            else if (r == 0 && in.skipping)
                rc = answer(l, &out, "", 0, true) ? -1 : obuf_flush(&out, l->out_fd);
            else
                rc = r < 0 ? -1 : 0;
            break;
        }
        in.len += (size_t)r;
    }
    free(in.p);
    free(out.p);
    kc__enrich_loop_release(l);
    return rc;
}
