/*
 * enrich_client.c — a metadata view that asks the node daemon (`kcache enrich --daemon`) over its
 * Unix socket: what each mmexternal helper rsyslog starts uses, so that N helpers share the
 * daemon's one cache and its one pod watch (CA8, MX3).
 *
 * Design: one connection, used synchronously (the helper answers one line at a time, MX7). Every
 * exchange is bounded by timeout_ms (poll on the socket); a daemon that is absent, refuses, hangs
 * or answers garbage makes the lookup fail with KC_EIO at once, so the record still gets its
 * file-derived fields (CA4) and no reply ever waits on the daemon longer than the timeout. The
 * connection is then closed and not tried again before a backoff delay (min_ms, doubling up to
 * max_ms, reset by a good answer): a missing daemon costs one connect() per delay, never a hot
 * loop. The last answer per request (64 slots, by the request line) is kept with its version;
 * the next ask carries that version and the daemon answers "same" while it is current, so a run
 * of one file's lines costs no JSON of the pod on either side (enrich_proto.c). Not thread-safe
 * (one helper, one thread).
 */
#include "enrich.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kcache/error.h"

#define MAX_REPLY   (256u << 20)
#define CACHE_SLOTS 64

/* The last answer for one request (direct-mapped by the request line). */
typedef struct slot {
    char *req;
    kc__enrich_meta meta;
} slot;

struct kc__enrich_client {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int fd;
    int64_t timeout_ms, min_ms, max_ms, backoff_ms, next_try_ms;
    uint64_t connects, reused;
    char *buf;
    size_t cap;
    slot cache[CACHE_SLOTS];
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

kc__enrich_client *kc__enrich_client_new(const char *path, int64_t timeout_ms, int64_t min_ms,
                                         int64_t max_ms)
{
    kc__enrich_client *c = calloc(1, sizeof *c);
    if (!c || strlen(path) >= sizeof c->path) {
        free(c);
        return NULL;
    }
    strcpy(c->path, path);
    c->fd = -1;
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 1000;
    c->min_ms = min_ms > 0 ? min_ms : 100;
    c->max_ms = max_ms >= c->min_ms ? max_ms : c->min_ms;
    c->backoff_ms = c->min_ms;
    return c;
}

void kc__enrich_client_free(kc__enrich_client *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        free(c->cache[i].req);
        kc__enrich_meta_clear(&c->cache[i].meta);
    }
    free(c->buf);
    free(c);
}

uint64_t kc__enrich_client_connects(const kc__enrich_client *c)
{
    return c ? c->connects : 0;
}

uint64_t kc__enrich_client_reused(const kc__enrich_client *c)
{
    return c ? c->reused : 0;
}

static slot *slot_of(kc__enrich_client *c, const char *req)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)req; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return &c->cache[h % CACHE_SLOTS];
}

/* After an answer to req (owned: kept or freed): remember it, or serve "same" from memory. */
static int remember(kc__enrich_client *c, char *req, int rc, kc__enrich_meta *ret)
{
    slot *s = slot_of(c, req);
    bool mine = s->req && !strcmp(s->req, req);
    if (!rc && ret->same) {
        if (!mine || strcmp(s->meta.version, ret->version)) {
            free(req);
            return KC_EIO; /* "same" as something we do not hold: not the protocol */
        }
        ret->pod = json_incref(s->meta.pod);
        ret->ns = json_incref(s->meta.ns);
        ret->deleted = s->meta.deleted;
        ret->same = false;
        c->reused++;
        free(req);
        return 0;
    }
    if (mine || (!rc && ret->version[0])) { /* replace the slot's answer */
        free(s->req);
        s->req = NULL;
        kc__enrich_meta_clear(&s->meta);
    }
    if (!rc && ret->version[0]) {
        s->req = req;
        s->meta = *ret;
        json_incref(ret->pod);
        json_incref(ret->ns);
        return 0;
    }
    free(req);
    return rc;
}

static void drop(kc__enrich_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->next_try_ms = now_ms() + c->backoff_ms;
    c->backoff_ms = c->backoff_ms * 2 > c->max_ms ? c->max_ms : c->backoff_ms * 2;
}

static int dial(kc__enrich_client *c)
{
    if (c->fd >= 0)
        return 0;
    if (now_ms() < c->next_try_ms)
        return KC_EIO;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, c->path);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof sa)) {
        drop(c);
        return KC_EIO;
    }
    c->connects++;
    return 0;
}

/* Wait for ev on the socket until deadline; 0 or KC_ETIMEOUT / KC_EIO. */
static int wait_fd(kc__enrich_client *c, short ev, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return KC_ETIMEOUT;
        struct pollfd p = {.fd = c->fd, .events = ev};
        int r = poll(&p, 1, (int)left);
        if (r > 0)
            return p.revents & (ev | POLLHUP) ? 0 : KC_EIO;
        if (r < 0 && errno != EINTR)
            return KC_EIO;
    }
}

static int send_all(kc__enrich_client *c, const char *s, size_t n, int64_t deadline)
{
    while (n) {
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w > 0) {
            s += w;
            n -= (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            int rc = wait_fd(c, POLLOUT, deadline);
            if (rc)
                return rc;
        } else {
            return KC_EIO;
        }
    }
    return 0;
}

/* Read one reply line into c->buf; its length, or a negative code. */
static ssize_t recv_line(kc__enrich_client *c, int64_t deadline)
{
    size_t len = 0;
    for (;;) {
        if (c->cap - len < 4096) {
            size_t cap = c->cap ? c->cap * 2 : 65536;
            char *p = cap <= MAX_REPLY ? realloc(c->buf, cap) : NULL;
            if (!p)
                return KC_ETOOLARGE;
            c->buf = p;
            c->cap = cap;
        }
        ssize_t r = recv(c->fd, c->buf + len, c->cap - len, 0);
        if (r > 0) {
            char *nl = memchr(c->buf + len, '\n', (size_t)r);
            len += (size_t)r;
            if (nl)
                return nl - c->buf;
        } else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
            int rc = wait_fd(c, POLLIN, deadline);
            if (rc)
                return rc;
        } else {
            return KC_EIO;
        }
    }
}

static int client_lookup(void *ud, const kc__enrich_key *key, kc__enrich_meta *ret)
{
    kc__enrich_client *c = ud;
    memset(ret, 0, sizeof *ret);
    int rc = dial(c);
    if (rc)
        return rc;
    char *plain = kc__enrich_proto_request(key), *req = plain;
    if (!plain)
        return KC_ENOMEM;
    slot *s = slot_of(c, plain);
    if (s->req && !strcmp(s->req, plain)) { /* ask with the version held */
        kc__enrich_key k = *key;
        k.have_version = s->meta.version;
        req = kc__enrich_proto_request(&k);
    }
    size_t n = req ? strlen(req) : 0;
    int64_t deadline = now_ms() + c->timeout_ms;
    if (req) {
        req[n] = '\n'; /* replaces the NUL for the send: one line */
        rc = send_all(c, req, n + 1, deadline);
        req[n] = '\0';
    }
    if (req != plain)
        free(req);
    ssize_t len = !req ? KC_ENOMEM : rc ? rc : recv_line(c, deadline);
    rc = len < 0 ? (int)len : kc__enrich_proto_parse_reply(c->buf, (size_t)len, ret);
    if (len < 0 || rc == -1) { /* no answer, or not the protocol: reconnect after a delay */
        free(plain);
        kc__enrich_meta_clear(ret);
        drop(c);
        return KC_EIO;
    }
    c->backoff_ms = c->min_ms;
    rc = remember(c, plain, rc, ret);
    if (rc == KC_EIO) {
        kc__enrich_meta_clear(ret);
        drop(c);
    }
    return rc;
}

kc__enrich_view kc__enrich_client_view(kc__enrich_client *c)
{
    return (kc__enrich_view){.lookup = client_lookup, .ud = c};
}
