/*
 * enrich_daemon.c — the node daemon's Unix-socket server: one cache, many helpers (CA8).
 *
 * Design: an accept thread polls the listening socket and a stop pipe; each accepted connection
 * gets its own thread (a lookup may wait up to --not-seen-wait for a pod the watch has not
 * delivered yet, and one waiting helper must not hold up the others), at most max_clients at
 * once — a connection beyond that is closed at once, and that helper falls back to file-derived
 * fields and retries later with backoff (enrich_client.c). A connection reads request lines
 * (bounded by KC_ENRICH_MAX_REQUEST: a longer one is answered with KC_ETOOLARGE and the
 * connection closed) and answers each with one reply line (enrich_proto.c). The view must be
 * thread-safe (kc_podmeta lookups are). Stop: the accept thread ends, every connection is shut
 * down and its thread joined, the socket file removed.
 *
 * Hello: a helper starts its connection with the line {"hello":1}; the daemon answers
 * {"hello":1} — and, when the view has a generation counter, {"hello":1,"generation":true} with
 * the counter's page attached (SCM_RIGHTS; a read-only reopening of the memfd, sealed against
 * shrinking so a helper's mapping never faults). The helper maps it read-only and reuses the
 * answers it holds while the counter is unchanged (enrich_reuse.c); when it moved, it asks with
 * the version it holds ("v", "same"). A helper that sends no hello is served as before, and a
 * daemon that does not know it answers it as a bad request: the helper then reuses nothing.
 */
#include "enrich.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "kcache/error.h"

typedef struct conn {
    kc__enrich_daemon *d;
    int fd;
    pthread_t th;
    bool used, done;
} conn;

struct kc__enrich_daemon {
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    int lfd, stop_pipe[2];
    kc__enrich_view view;
    int page_fd; /* the generation page handed to helpers (read-only), or -1 */
    pthread_t accept_th;
    pthread_mutex_t mu;
    conn *conns;
    int max;
    atomic_uint_fast64_t requests;
};

static int send_line(int fd, char *s)
{
    if (!s)
        return -1;
    size_t n = strlen(s), off = 0;
    s[n] = '\n';
    while (off <= n) {
        ssize_t w = send(fd, s + off, n + 1 - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            free(s);
            return -1;
        }
        off += (size_t)w;
    }
    free(s);
    return 0;
}

_Atomic uint64_t *kc__enrich_genpage_new(int *fd)
{
    long pg = sysconf(_SC_PAGESIZE);
    int f = memfd_create("kcache-enrich-generation", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (f < 0 || ftruncate(f, pg) || fcntl(f, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL)) {
        if (f >= 0)
            close(f);
        return NULL;
    }
    void *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
    if (p == MAP_FAILED) {
        close(f);
        return NULL;
    }
    *fd = f;
    return p; /* zero-filled: the counter starts at 0 */
}

void kc__enrich_genpage_free(_Atomic uint64_t *gen, int fd)
{
    if (gen)
        munmap((void *)gen, (size_t)sysconf(_SC_PAGESIZE));
    if (fd >= 0)
        close(fd);
}

/* The hello line, with the generation page attached when there is one. 0 or -1. */
static int send_hello(int fd, int page_fd)
{
    const char *h = page_fd >= 0 ? "{\"hello\":1,\"generation\":true}\n" : "{\"hello\":1}\n";
    struct iovec iov = {.iov_base = (void *)h, .iov_len = strlen(h)};
    union {
        struct cmsghdr hdr;
        char b[CMSG_SPACE(sizeof(int))];
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (page_fd >= 0) {
        memset(&u, 0, sizeof u);
        m.msg_control = u.b;
        m.msg_controllen = sizeof u.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &page_fd, sizeof(int));
    }
    ssize_t w;
    do
        w = sendmsg(fd, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w == (ssize_t)iov.iov_len ? 0 : -1;
}

static bool is_hello(const char *line, size_t n)
{
    json_t *o = json_loadb(line, n, 0, NULL);
    bool h = json_integer_value(json_object_get(o, "hello")) == 1;
    json_decref(o);
    return h;
}

static int serve_line(kc__enrich_daemon *d, int fd, const char *line, size_t n)
{
    kc__enrich_key key;
    kc__enrich_meta meta = {0};
    bool bad = kc__enrich_proto_parse_request(line, n, &key) != 0;
    if (bad && is_hello(line, n))
        return send_hello(fd, d->page_fd);
    int rc = bad ? KC_EINVAL : d->view.lookup(d->view.ud, &key, &meta);
    atomic_fetch_add(&d->requests, 1);
    char *reply = kc__enrich_proto_reply(rc, &meta);
    kc__enrich_meta_clear(&meta);
    return send_line(fd, reply);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    char *buf = malloc(KC_ENRICH_MAX_REQUEST + 1);
    size_t len = 0;
    while (buf) {
        ssize_t r = recv(c->fd, buf + len, KC_ENRICH_MAX_REQUEST + 1 - len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        size_t start = 0;
        char *nl;
        bool bad = false;
        while (!bad && (nl = memchr(buf + start, '\n', len - start))) {
            bad = serve_line(c->d, c->fd, buf + start, (size_t)(nl - (buf + start))) != 0;
            start = (size_t)(nl - buf) + 1;
        }
        memmove(buf, buf + start, len - start);
        len -= start;
        if (bad || len > KC_ENRICH_MAX_REQUEST) {
            if (!bad)
                send_line(c->fd, kc__enrich_proto_reply(KC_ETOOLARGE, NULL));
            break;
        }
    }
    free(buf);
    pthread_mutex_lock(&c->d->mu);
    close(c->fd);
    c->fd = -1;
    c->done = true;
    pthread_mutex_unlock(&c->d->mu);
    return NULL;
}

/* A free slot (joining a finished connection's thread), or NULL; under d->mu. */
static conn *free_slot(kc__enrich_daemon *d)
{
    for (int i = 0; i < d->max; i++) {
        conn *c = &d->conns[i];
        if (c->used && c->done) {
            pthread_join(c->th, NULL); /* it has returned or is returning */
            c->used = false;
        }
        if (!c->used)
            return c;
    }
    return NULL;
}

static void *accept_main(void *arg)
{
    kc__enrich_daemon *d = arg;
    for (;;) {
        struct pollfd p[2] = {{.fd = d->lfd, .events = POLLIN},
                              {.fd = d->stop_pipe[0], .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents)
            break;
        if (!(p[0].revents & POLLIN))
            continue;
        int fd = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        pthread_mutex_lock(&d->mu);
        conn *c = free_slot(d);
        if (c) {
            *c = (conn){.d = d, .fd = fd, .used = true};
            if (pthread_create(&c->th, NULL, conn_main, c))
                c->used = false;
        }
        if (!c || !c->used)
            close(fd);
        pthread_mutex_unlock(&d->mu);
    }
    return NULL;
}

static int listen_on(const char *path, char *msg, size_t n)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) {
        snprintf(msg, n, "--socket: path longer than %zu bytes", sizeof sa.sun_path - 1);
        return -1;
    }
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    unlink(path); /* a socket left by an earlier daemon */
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 128)) {
        snprintf(msg, n, "--socket %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

kc__enrich_daemon *kc__enrich_daemon_start(const char *path, kc__enrich_view view, int max_clients,
                                           char *msg, size_t n)
{
    kc__enrich_daemon *d = calloc(1, sizeof *d);
    if (!d || max_clients < 1 || !(d->conns = calloc((size_t)max_clients, sizeof *d->conns))) {
        snprintf(msg, n, "out of memory");
        free(d);
        return NULL;
    }
    d->max = max_clients;
    d->view = view;
    d->page_fd = -1;
    if (view.generation) { /* helpers get the page read-only: a reopening through /proc */
        char p[64];
        snprintf(p, sizeof p, "/proc/self/fd/%d", view.generation_fd);
        d->page_fd = open(p, O_RDONLY | O_CLOEXEC);
        if (d->page_fd < 0) /* no /proc: the helper still maps it read-only */
            d->page_fd = fcntl(view.generation_fd, F_DUPFD_CLOEXEC, 0);
    }
    strncpy(d->path, path, sizeof d->path - 1);
    pthread_mutex_init(&d->mu, NULL);
    d->lfd = listen_on(path, msg, n);
    if (d->lfd < 0 || pipe2(d->stop_pipe, O_CLOEXEC) ||
        pthread_create(&d->accept_th, NULL, accept_main, d)) {
        if (d->lfd >= 0)
            snprintf(msg, n, "cannot start the socket server: %s", strerror(errno));
        if (d->page_fd >= 0)
            close(d->page_fd);
        free(d->conns);
        free(d);
        return NULL;
    }
    return d;
}

void kc__enrich_daemon_stop(kc__enrich_daemon *d)
{
    if (!d)
        return;
    (void)!write(d->stop_pipe[1], "x", 1);
    pthread_join(d->accept_th, NULL);
    close(d->lfd);
    unlink(d->path);
    for (int i = 0; i < d->max; i++) {
        pthread_mutex_lock(&d->mu);
        conn *c = &d->conns[i];
        bool used = c->used;
        if (used && c->fd >= 0)
            shutdown(c->fd, SHUT_RDWR);
        pthread_mutex_unlock(&d->mu);
        if (used)
            pthread_join(c->th, NULL);
    }
    close(d->stop_pipe[0]);
    close(d->stop_pipe[1]);
    if (d->page_fd >= 0)
        close(d->page_fd);
    pthread_mutex_destroy(&d->mu);
    free(d->conns);
    free(d);
}

uint64_t kc__enrich_daemon_requests(const kc__enrich_daemon *d)
{
    return d ? atomic_load(&((kc__enrich_daemon *)d)->requests) : 0;
}
