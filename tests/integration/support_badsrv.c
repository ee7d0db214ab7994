/*
 * tests/integration/support_badsrv.c — the misbehaving HTTP server of kc_badsrv.h.
 *
 * One accept thread and one thread per connection (at most KC_BADSRV_MAX_CONNS at once; a
 * connection past that is closed at accept). A connection thread reads a request head up to the
 * blank line (64 KiB at most, else the connection is closed), drops a body by its Content-Length,
 * logs the request and calls the handler, which writes raw bytes. The log keeps every request's
 * target and arrival time (at most LOG_MAX; later ones are counted by kc_badsrv_count only through
 * the total). Stop shuts every socket down, so reads and writes in flight return, wakes stalls,
 * and joins. Test code: it is not the library's HTTP stack and never needs to be.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "kc_badsrv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define HEAD_MAX (64 * 1024)
#define LOG_MAX  200000

struct kc_badsrv_conn {
    kc_badsrv *s;
    int fd;
    pthread_t th;
    bool used, done;
};

typedef struct logent {
    char *target;
    uint64_t t_ns;
} logent;

struct kc_badsrv {
    kc_badsrv_handler h;
    void *ud;
    int lfd;
    char url[64];
    pthread_t acceptor;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping;
    kc_badsrv_conn conns[KC_BADSRV_MAX_CONNS];
    logent *log;
    uint64_t n_log, n_req, n_conns;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void deadline_ts(struct timespec *ts, int64_t ms)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += ms / 1000;
    ts->tv_nsec += (ms % 1000) * 1000000;
    if (ts->tv_nsec >= 1000000000) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000;
    }
}

bool kc_badsrv_write(kc_badsrv_conn *c, const void *p, size_t n)
{
    const char *b = p;
    while (n > 0) {
        ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        b += w;
        n -= (size_t)w;
    }
    return true;
}

static bool vprintf_to(kc_badsrv_conn *c, bool chunk, const char *fmt, va_list ap)
{
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    if (n < 0)
        return false;
    bool ok = chunk ? kc_badsrv_chunk(c, s, (size_t)n) : kc_badsrv_write(c, s, (size_t)n);
    free(s);
    return ok;
}

bool kc_badsrv_printf(kc_badsrv_conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = vprintf_to(c, false, fmt, ap);
    va_end(ap);
    return ok;
}

bool kc_badsrv_chunkf(kc_badsrv_conn *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool ok = vprintf_to(c, true, fmt, ap);
    va_end(ap);
    return ok;
}

bool kc_badsrv_reply(kc_badsrv_conn *c, int status, const char *extra_headers, const char *body)
{
    size_t n = body ? strlen(body) : 0;
    return kc_badsrv_printf(c,
                            "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                            "Content-Length: %zu\r\n%s\r\n",
                            status, n, extra_headers ? extra_headers : "") &&
           kc_badsrv_write(c, body ? body : "", n);
}

bool kc_badsrv_chunked(kc_badsrv_conn *c, int status, const char *extra_headers)
{
    return kc_badsrv_printf(c,
                            "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
                            "Transfer-Encoding: chunked\r\n%s\r\n",
                            status, extra_headers ? extra_headers : "");
}

bool kc_badsrv_chunk(kc_badsrv_conn *c, const void *p, size_t n)
{
    char head[32];
    int k = snprintf(head, sizeof(head), "%zx\r\n", n);
    return kc_badsrv_write(c, head, (size_t)k) && kc_badsrv_write(c, p, n) &&
           kc_badsrv_write(c, "\r\n", 2);
}

bool kc_badsrv_stall(kc_badsrv_conn *c, int64_t ms)
{
    kc_badsrv *s = c->s;
    struct timespec ts;
    if (ms >= 0)
        deadline_ts(&ts, ms);
    pthread_mutex_lock(&s->mu);
    while (!s->stopping) {
        if (ms < 0)
            pthread_cond_wait(&s->cv, &s->mu);
        else if (pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
            break;
    }
    bool ok = !s->stopping;
    pthread_mutex_unlock(&s->mu);
    return ok;
}

kc_badsrv *kc_badsrv_of(kc_badsrv_conn *c)
{
    return c->s;
}

/* Read one request head into buf (NUL-terminated); its length, 0 at EOF or on error. Bytes past
 * the head (a pipelined request) are not expected from the clients under test and are dropped. */
static size_t read_head(int fd, char *buf, size_t cap, size_t *body_len)
{
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        n += (size_t)r;
        buf[n] = '\0';
        char *end = strstr(buf, "\r\n\r\n");
        if (end) {
            size_t head = (size_t)(end - buf) + 4;
            const char *cl = strcasestr(buf, "\r\nContent-Length:");
            size_t want = cl && cl < end ? strtoul(cl + 17, NULL, 10) : 0;
            *body_len = want > n - head ? want - (n - head) : 0;
            end[2] = '\0';
            return head;
        }
    }
    return 0;
}

static bool drop_body(int fd, size_t n)
{
    char tmp[4096];
    while (n > 0) {
        ssize_t r = recv(fd, tmp, n < sizeof(tmp) ? n : sizeof(tmp), 0);
        if (r <= 0)
            return false;
        n -= (size_t)r;
    }
    return true;
}

static void log_request(kc_badsrv *s, const char *target, uint64_t *index)
{
    pthread_mutex_lock(&s->mu);
    *index = s->n_req++;
    if (s->n_log < LOG_MAX) {
        s->log[s->n_log].target = strdup(target);
        s->log[s->n_log].t_ns = now_ns();
        s->n_log++;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *conn_main(void *arg)
{
    kc_badsrv_conn *c = arg;
    kc_badsrv *s = c->s;
    char *buf = malloc(HEAD_MAX);
    for (uint64_t k = 0; buf; k++) {
        size_t body = 0;
        if (read_head(c->fd, buf, HEAD_MAX, &body) == 0 || !drop_body(c->fd, body))
            break;
        char *sp1 = strchr(buf, ' ');
        char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
        char *eol = strstr(buf, "\r\n");
        if (!sp1 || !sp2 || !eol || sp2 > eol)
            break;
        *sp1 = *sp2 = '\0';
        kc_badsrv_req req = {.method = buf, .target = sp1 + 1, .headers = eol + 2, .conn_index = k};
        log_request(s, req.target, &req.index);
        if (s->h(s->ud, &req, c) != KC_BADSRV_KEEP)
            break;
    }
    free(buf);
    pthread_mutex_lock(&s->mu);
    shutdown(c->fd, SHUT_RDWR);
    close(c->fd);
    c->fd = -1;
    c->done = true;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* A free slot (joining a finished connection's thread first), or NULL. Under s->mu. */
static kc_badsrv_conn *take_slot(kc_badsrv *s)
{
    for (int i = 0; i < KC_BADSRV_MAX_CONNS; i++) {
        kc_badsrv_conn *c = &s->conns[i];
        if (c->used && c->done) {
            pthread_join(c->th, NULL);
            c->used = false;
        }
        if (!c->used)
            return c;
    }
    return NULL;
}

static void *accept_main(void *arg)
{
    kc_badsrv *s = arg;
    for (;;) {
        int fd = accept(s->lfd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL; /* shut down by stop */
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        pthread_mutex_lock(&s->mu);
        kc_badsrv_conn *c = s->stopping ? NULL : take_slot(s);
        if (c) {
            s->n_conns++;
            *c = (kc_badsrv_conn){.s = s, .fd = fd, .used = true};
            if (pthread_create(&c->th, NULL, conn_main, c) != 0) {
                c->used = false;
                c = NULL;
            }
        }
        pthread_mutex_unlock(&s->mu);
        if (!c)
            close(fd);
    }
}

kc_badsrv *kc_badsrv_start(kc_badsrv_handler h, void *ud)
{
    kc_badsrv *s = calloc(1, sizeof(*s));
    if (!s || !(s->log = calloc(LOG_MAX, sizeof(logent)))) {
        free(s);
        return NULL;
    }
    s->h = h;
    s->ud = ud;
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(s->lfd, 64) != 0 || getsockname(s->lfd, (struct sockaddr *)&sa, &sl) != 0 ||
        pthread_create(&s->acceptor, NULL, accept_main, s) != 0) {
        fprintf(stderr, "kc_badsrv_start: %s\n", strerror(errno));
        if (s->lfd >= 0)
            close(s->lfd);
        free(s->log);
        free(s);
        return NULL;
    }
    snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
    return s;
}

const char *kc_badsrv_url(const kc_badsrv *s)
{
    return s->url;
}

void kc_badsrv_stop(kc_badsrv *s)
{
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_cond_broadcast(&s->cv);
    shutdown(s->lfd, SHUT_RDWR);
    for (int i = 0; i < KC_BADSRV_MAX_CONNS; i++)
        if (s->conns[i].used && !s->conns[i].done)
            shutdown(s->conns[i].fd, SHUT_RDWR);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->acceptor, NULL);
    close(s->lfd);
    for (int i = 0; i < KC_BADSRV_MAX_CONNS; i++)
        if (s->conns[i].used)
            pthread_join(s->conns[i].th, NULL);
    for (uint64_t i = 0; i < s->n_log; i++)
        free(s->log[i].target);
    free(s->log);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static bool matches(const logent *e, const char *needle)
{
    return !needle || (e->target && strstr(e->target, needle));
}

uint64_t kc_badsrv_count(kc_badsrv *s, const char *needle)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = 0;
    for (uint64_t i = 0; i < s->n_log; i++)
        n += matches(&s->log[i], needle);
    if (!needle)
        n = s->n_req;
    pthread_mutex_unlock(&s->mu);
    return n;
}

uint64_t kc_badsrv_wait(kc_badsrv *s, const char *needle, uint64_t n, int64_t timeout_ms)
{
    struct timespec ts;
    deadline_ts(&ts, timeout_ms);
    uint64_t got;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        got = 0;
        for (uint64_t i = 0; i < s->n_log; i++)
            got += matches(&s->log[i], needle);
        if (got >= n || s->stopping || pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&s->mu);
    return got;
}

uint64_t kc_badsrv_time_ns(kc_badsrv *s, const char *needle, uint64_t k)
{
    uint64_t t = 0;
    pthread_mutex_lock(&s->mu);
    for (uint64_t i = 0; i < s->n_log; i++)
        if (matches(&s->log[i], needle) && k-- == 0) {
            t = s->log[i].t_ns;
            break;
        }
    pthread_mutex_unlock(&s->mu);
    return t;
}

uint64_t kc_badsrv_connections(kc_badsrv *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = s->n_conns;
    pthread_mutex_unlock(&s->mu);
    return n;
}
