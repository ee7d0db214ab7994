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
 *
 * Generation: the client's first line is a hello; the daemon's answer (enrich_daemon.c) may carry
 * its generation page (an older daemon answers it as a bad request: no page); the client maps
 * it read-only and its stamp (kc__enrich_view.stamp) is the counter plus an offset chosen at each
 * connection so that a token never repeats across reconnects (a restarted daemon's counter starts
 * at 0 again). The helper's answer cache (enrich_reuse.c) reuses replies while the stamp holds. A
 * dead daemon: its socket polls readable (EOF) — no request is outstanding between records, so
 * anything readable means the connection is over. The stamp checks that at most every
 * LIVENESS_MS; then the connection is dropped and the stamp says "no reuse" until the next
 * connection, so answers of a dead daemon are reused for LIVENESS_MS at most.
 */
#include "enrich.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "kcache/error.h"

#define MAX_REPLY   (256u << 20)
#define CACHE_SLOTS 64
#define LIVENESS_MS 50
#define MAX_HELLO   256

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
    const _Atomic uint64_t *page; /* the daemon's generation page, mapped read-only, or NULL */
    uint64_t offset, last_token;  /* stamp = *page + offset; last_token: the largest given */
    int64_t next_check_ms;
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

static void unmap_page(kc__enrich_client *c)
{
    if (c->page)
        munmap((void *)c->page, (size_t)sysconf(_SC_PAGESIZE));
    c->page = NULL;
}

void kc__enrich_client_free(kc__enrich_client *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    unmap_page(c);
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
    unmap_page(c);
    c->next_try_ms = now_ms() + c->backoff_ms;
    c->backoff_ms = c->backoff_ms * 2 > c->max_ms ? c->max_ms : c->backoff_ms * 2;
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

/* Map the page fd carries (read-only); fd is closed. 0 or -1. */
static int map_page(kc__enrich_client *c, int fd)
{
    struct stat st;
    long pg = sysconf(_SC_PAGESIZE);
    void *p = fstat(fd, &st) || st.st_size < pg
                  ? MAP_FAILED
                  : mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    c->page = p;
    /* the first token of this connection is past every token given before */
    c->offset = c->last_token + 1 - atomic_load_explicit(c->page, memory_order_acquire);
    return 0;
}

/* Send the hello and read the daemon's answer (and the generation page with it), within
 * timeout_ms. 0 or -1. */
static int hello(kc__enrich_client *c)
{
    char line[MAX_HELLO];
    size_t len = 0;
    int page_fd = -1;
    int64_t deadline = now_ms() + c->timeout_ms;
    if (send_all(c, "{\"hello\":1}\n", 12, deadline))
        return -1;
    while (!memchr(line, '\n', len)) {
        union {
            struct cmsghdr hdr;
            char b[CMSG_SPACE(sizeof(int))];
        } u;
        struct iovec iov = {.iov_base = line + len, .iov_len = sizeof line - len};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
        ssize_t r = len < sizeof line ? recvmsg(c->fd, &m, MSG_CMSG_CLOEXEC) : 0;
        struct cmsghdr *h = r > 0 ? CMSG_FIRSTHDR(&m) : NULL;
        if (h && h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && page_fd < 0 &&
            h->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(&page_fd, CMSG_DATA(h), sizeof(int));
        if (r > 0)
            len += (size_t)r;
        else if (!(r < 0 && (errno == EAGAIN || errno == EINTR)) || wait_fd(c, POLLIN, deadline)) {
            if (page_fd >= 0)
                close(page_fd);
            return -1;
        }
    }
    size_t n = (size_t)((char *)memchr(line, '\n', len) - line);
    json_t *o = json_loadb(line, n, 0, NULL);
    /* an older daemon's "bad request" reply is fine too: then no page */
    bool ok = json_is_object(o) && n + 1 == len; /* alone */
    bool gen = json_integer_value(json_object_get(o, "hello")) == 1 &&
               json_is_true(json_object_get(o, "generation"));
    json_decref(o);
    if (page_fd >= 0 && ok && gen)
        map_page(c, page_fd); /* closes it; not mapped: no reuse on this connection */
    else if (page_fd >= 0)
        close(page_fd);
    return ok ? 0 : -1;
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
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof sa) || hello(c)) {
        drop(c);
        return KC_EIO;
    }
    c->connects++;
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

/* The view's stamp: the daemon's counter (with this connection's offset) while connected and
 * alive. */
static bool client_stamp(void *ud, uint64_t *ret)
{
    kc__enrich_client *c = ud;
    if (!c->page)
        return false;
    int64_t now = now_ms();
    if (now >= c->next_check_ms) { /* readable between exchanges: EOF, the daemon is gone */
        c->next_check_ms = now + LIVENESS_MS;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, 0) != 0) {
            drop(c);
            return false;
        }
    }
    uint64_t t = atomic_load_explicit(c->page, memory_order_acquire) + c->offset;
    if (t > c->last_token)
        c->last_token = t;
    *ret = t;
    return true;
}

kc__enrich_view kc__enrich_client_view(kc__enrich_client *c)
{
    return (kc__enrich_view){.lookup = client_lookup, .ud = c, .stamp = client_stamp};
}
