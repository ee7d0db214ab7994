/*
 * webhook/tls.c — the TLS front end: OpenSSL in front of libmicrohttpd.
 *
 * Why not libmicrohttpd's own TLS: it is GnuTLS, and reloading a certificate there needs GnuTLS's
 * own retrieve callback; the project's TLS is OpenSSL. So this file terminates TLS and hands the
 * plaintext to an MHD daemon that has no listen socket (MHD_USE_NO_LISTEN_SOCKET): MHD still
 * parses HTTP/1.1, keep-alive included, and nothing here reads HTTP.
 *
 * Threads: one accept thread polls the listen socket and a stop eventfd. Each accepted socket gets
 * one detached relay thread (at most max_connections; beyond that the socket is closed at once,
 * before any TLS byte: a clean refusal the client sees as a closed connection). The relay thread
 *   1. runs the handshake on the non-blocking socket, bounded by handshake_ms (TLS 1.2 minimum,
 *      1.3 maximum, ECDHE AES-GCM/ChaCha20 suites for 1.2, ALPN http/1.1 only, no renegotiation,
 *      no session resumption: every handshake runs the certificate callback, so a new connection
 *      always gets the pair in use — TLS1, TLS6). The callback takes a reference on the current
 *      pair (certs.c) and installs it on this SSL;
 *   2. creates a socketpair and gives one end to MHD (MHD_add_connection: MHD's own thread for
 *      the connection parses it; the peer address passed is the client's);
 *   3. pumps both directions with poll(): SSL_read → socketpair, socketpair → SSL_write, with one
 *      16 KiB buffer per direction, until either side closes.
 * A thread per connection was chosen over an epoll loop for simplicity: the non-blocking state
 * machine of one connection is ~80 lines, and a webhook server has few, long-lived keep-alive
 * connections from API servers (measured in docs/webhooks.md).
 *
 * Stopping: kc__wh_tls_stop_accepting closes the listener; the server then drains its handlers
 * and stops MHD, which closes its socketpair ends, so each relay flushes what MHD wrote and ends.
 * kc__wh_tls_free then signals the stop eventfd (a relay still running — a handshake, a client not
 * reading — ends within a second) and waits for the count of relays to reach zero.
 */
#include "webhook/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_BUF  16384
#define STOP_GRACE (1000 * KC__NS_PER_MS)

struct kc__wh_tls {
    SSL_CTX *ctx;
    kc__wh_certs *certs;
    struct MHD_Daemon *mhd;
    int listen_fd, accept_stop_fd, stop_fd;
    int64_t handshake_ms;
    unsigned max_conns;
    pthread_t accept_thread;
    pthread_mutex_t mu; /* guards conns */
    pthread_cond_t cond;
    unsigned conns;
    atomic_bool stopping;
    bool accepting;
};

typedef struct conn {
    kc__wh_tls *t;
    int fd, sp;
    SSL *ssl;
    struct sockaddr_storage addr;
    socklen_t addr_len;
} conn;

/* ---- SSL_CTX -------------------------------------------------------------------------------- */

static int cert_cb(SSL *ssl, void *arg)
{
    kc__wh_tls *t = arg;
    kc__wh_pair *p = kc__wh_certs_get(t->certs);
    int ok = SSL_use_certificate(ssl, p->leaf) == 1 && SSL_use_PrivateKey(ssl, p->key) == 1 &&
             SSL_set1_chain(ssl, p->chain) == 1;
    kc__wh_pair_unref(p);
    return ok ? 1 : 0;
}

static int alpn_cb(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                   const unsigned char *in, unsigned int inlen, void *arg)
{
    (void)ssl;
    (void)arg;
    static const unsigned char h11[] = "\x08http/1.1";
    unsigned char *sel = NULL;
    if (SSL_select_next_proto(&sel, outlen, h11, sizeof h11 - 1, in, inlen) ==
        OPENSSL_NPN_NEGOTIATED) {
        *out = sel;
        return SSL_TLSEXT_ERR_OK;
    }
    return SSL_TLSEXT_ERR_NOACK; /* no common protocol: go on without ALPN (HTTP/1.1) */
}

static int ctx_new(kc__wh_tls *t, const char *client_ca, kc_error *err)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx)
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory (SSL_CTX)");
    t->ctx = ctx;
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                 SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
                              SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20");
    SSL_CTX_set_cert_cb(ctx, cert_cb, t);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_cb, NULL);
    if (client_ca) {
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(client_ca);
        if (!names || SSL_CTX_load_verify_locations(ctx, client_ca, NULL) != 1) {
            sk_X509_NAME_pop_free(names, X509_NAME_free);
            unsigned long e = ERR_get_error();
            char reason[256] = "no certificate in the file";
            if (e)
                ERR_error_string_n(e, reason, sizeof reason);
            ERR_clear_error();
            return kc_error_set(err, KC_ECONFIG, "webhook: client_ca_file %s: %s", client_ca,
                                reason);
        }
        SSL_CTX_set_client_CA_list(ctx, names);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    return 0;
}

/* ---- one connection ------------------------------------------------------------------------- */

/* Wait for events on the TLS socket (and the stop fd) until deadline; false on stop or timeout. */
static bool wait_fd(kc__wh_tls *t, int fd, short events, uint64_t deadline)
{
    struct pollfd p[2] = {{fd, events, 0}, {t->stop_fd, POLLIN, 0}};
    for (;;) {
        uint64_t left = kc__deadline_left_ns(deadline);
        if (left == 0)
            return false;
        int n = poll(p, 2, (int)((left + KC__NS_PER_MS - 1) / KC__NS_PER_MS));
        if (n < 0 && errno == EINTR)
            continue;
        return n > 0 && !(p[1].revents & POLLIN);
    }
}

static bool handshake(conn *c)
{
    uint64_t deadline = kc__deadline_after_ms(c->t->handshake_ms);
    for (;;) {
        int r = SSL_accept(c->ssl);
        if (r == 1)
            return true;
        int e = SSL_get_error(c->ssl, r);
        short ev = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (!ev || !wait_fd(c->t, c->fd, ev, deadline)) {
            ERR_clear_error();
            return false;
        }
    }
}

typedef struct relay {
    char to_mhd[RELAY_BUF], to_cli[RELAY_BUF];
    size_t tm_off, tm_len, tc_off, tc_len;
    bool cli_eof, mhd_eof;
    short tls_ev, sp_ev; /* what the last attempts wait for */
} relay;

/* Client → MHD. Returns true when it made progress. */
static bool pump_in(conn *c, relay *r)
{
    bool progress = false;
    if (r->tm_len == 0 && !r->cli_eof) {
        int n = SSL_read(c->ssl, r->to_mhd, RELAY_BUF);
        if (n > 0) {
            r->tm_off = 0;
            r->tm_len = (size_t)n;
            progress = true;
        } else {
            int e = SSL_get_error(c->ssl, n);
            if (e == SSL_ERROR_WANT_READ)
                r->tls_ev |= POLLIN;
            else if (e == SSL_ERROR_WANT_WRITE)
                r->tls_ev |= POLLOUT;
            else
                r->cli_eof = true; /* close_notify, reset or a TLS error: the client is gone */
            ERR_clear_error();
        }
    }
    if (r->tm_len > 0) {
        ssize_t n = send(c->sp, r->to_mhd + r->tm_off, r->tm_len, MSG_NOSIGNAL);
        if (n > 0) {
            r->tm_off += (size_t)n;
            r->tm_len -= (size_t)n;
            progress = true;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            r->sp_ev |= POLLOUT;
        } else if (n < 0 && errno != EINTR) {
            r->mhd_eof = true; /* MHD closed its end */
            r->tm_len = 0;
        }
    }
    return progress;
}

/* MHD → client. Returns true when it made progress. */
static bool pump_out(conn *c, relay *r)
{
    bool progress = false;
    if (r->tc_len == 0 && !r->mhd_eof) {
        ssize_t n = recv(c->sp, r->to_cli, RELAY_BUF, 0);
        if (n > 0) {
            r->tc_off = 0;
            r->tc_len = (size_t)n;
            progress = true;
        } else if (n == 0) {
            r->mhd_eof = true;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            r->sp_ev |= POLLIN;
        } else if (errno != EINTR) {
            r->mhd_eof = true;
        }
    }
    if (r->tc_len > 0 && !r->cli_eof) {
        int n = SSL_write(c->ssl, r->to_cli + r->tc_off, (int)r->tc_len);
        if (n > 0) {
            r->tc_off += (size_t)n;
            r->tc_len -= (size_t)n;
            progress = true;
        } else {
            int e = SSL_get_error(c->ssl, n);
            if (e == SSL_ERROR_WANT_READ)
                r->tls_ev |= POLLIN;
            else if (e == SSL_ERROR_WANT_WRITE)
                r->tls_ev |= POLLOUT;
            else
                r->cli_eof = true;
            ERR_clear_error();
        }
    } else if (r->cli_eof) {
        r->tc_len = 0;
    }
    return progress;
}

static void relay_loop(conn *c)
{
    relay *r = calloc(1, sizeof(*r));
    if (!r)
        return;
    uint64_t stop_deadline = 0;
    for (;;) {
        r->tls_ev = r->sp_ev = 0;
        bool progress = pump_in(c, r);
        progress |= pump_out(c, r);
        if (r->mhd_eof && r->tc_len == 0)
            break; /* MHD closed the connection and everything it wrote is out */
        if (r->cli_eof && r->tm_len == 0) {
            shutdown(c->sp, SHUT_WR); /* tell MHD the client is gone */
            if (r->mhd_eof || r->tc_len == 0)
                break;
        }
        if (progress)
            continue;
        bool stopping = atomic_load(&c->t->stopping);
        if (stopping && !stop_deadline)
            stop_deadline = kc__now_ns() + STOP_GRACE;
        int timeout = -1;
        if (stop_deadline) {
            uint64_t left = kc__deadline_left_ns(stop_deadline);
            if (left == 0)
                break;
            timeout = (int)(left / KC__NS_PER_MS) + 1;
        }
        struct pollfd p[3] = {{c->fd, r->tls_ev, 0}, {c->sp, r->sp_ev, 0}, {c->t->stop_fd, 0, 0}};
        if (!stopping)
            p[2].events = POLLIN;
        if (poll(p, 3, timeout) < 0 && errno != EINTR)
            break;
    }
    if (!r->cli_eof)
        SSL_shutdown(c->ssl); /* close_notify; the answer is not waited for */
    free(r);
}

static void *conn_main(void *arg)
{
    conn *c = arg;
    kc__wh_tls *t = c->t;
    c->sp = -1;
    c->ssl = SSL_new(t->ctx);
    if (c->ssl && SSL_set_fd(c->ssl, c->fd) == 1 && handshake(c)) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sp) == 0) {
            c->sp = sp[0];
            /* MHD owns sp[1] from here, even when it refuses it (it closes it then). */
            if (MHD_add_connection(t->mhd, sp[1], (const struct sockaddr *)&c->addr, c->addr_len) ==
                MHD_YES)
                relay_loop(c);
        }
    }
    ERR_clear_error();
    SSL_free(c->ssl);
    if (c->sp >= 0)
        close(c->sp);
    close(c->fd);
    free(c);
    pthread_mutex_lock(&t->mu);
    t->conns--;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* ---- accepting ------------------------------------------------------------------------------ */

static void spawn(kc__wh_tls *t, int fd, const struct sockaddr_storage *addr, socklen_t len)
{
    pthread_mutex_lock(&t->mu);
    bool room = t->conns < t->max_conns;
    if (room)
        t->conns++;
    pthread_mutex_unlock(&t->mu);
    conn *c = room ? calloc(1, sizeof(*c)) : NULL;
    pthread_attr_t attr;
    pthread_t th;
    if (c) {
        c->t = t;
        c->fd = fd;
        c->addr = *addr;
        c->addr_len = len;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        int rc = pthread_create(&th, &attr, conn_main, c);
        pthread_attr_destroy(&attr);
        if (rc == 0)
            return;
        free(c);
    }
    close(fd); /* over max_connections (or out of resources): a clean close, no TLS byte */
    if (room) {
        pthread_mutex_lock(&t->mu);
        t->conns--;
        pthread_cond_broadcast(&t->cond);
        pthread_mutex_unlock(&t->mu);
    }
}

static void *accept_main(void *arg)
{
    kc__wh_tls *t = arg;
    struct pollfd p[2] = {{t->listen_fd, POLLIN, 0}, {t->accept_stop_fd, POLLIN, 0}};
    for (;;) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents & POLLIN)
            break;
        struct sockaddr_storage addr;
        socklen_t len = sizeof addr;
        int fd =
            accept4(t->listen_fd, (struct sockaddr *)&addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                kc__sleep_ns(10 * KC__NS_PER_MS); /* backoff: out of descriptors */
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        spawn(t, fd, &addr, len);
    }
    return NULL;
}

int kc__wh_tls_start(const kc__wh_tls_opts *o, kc__wh_tls **ret, kc_error *err)
{
    kc__wh_tls *t = calloc(1, sizeof(*t));
    if (!t) {
        close(o->listen_fd);
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    }
    t->listen_fd = o->listen_fd;
    t->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    t->accept_stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    t->certs = o->certs;
    t->mhd = o->mhd;
    t->handshake_ms = o->handshake_ms;
    t->max_conns = o->max_connections;
    pthread_mutex_init(&t->mu, NULL);
    kc__cond_init_monotonic(&t->cond);
    int rc = t->stop_fd < 0 || t->accept_stop_fd < 0
                 ? kc_error_set(err, KC_EIO, "webhook: eventfd: %s", strerror(errno))
                 : ctx_new(t, o->client_ca, err);
    if (rc == 0 && pthread_create(&t->accept_thread, NULL, accept_main, t) != 0)
        rc = kc_error_set(err, KC_ENOMEM, "webhook: cannot start the accept thread");
    if (rc) {
        kc__wh_tls_free(t);
        return rc;
    }
    t->accepting = true;
    *ret = t;
    return 0;
}

void kc__wh_tls_stop_accepting(kc__wh_tls *t)
{
    if (!t || !t->accepting)
        return;
    uint64_t one = 1;
    ssize_t n = write(t->accept_stop_fd, &one, sizeof one);
    (void)n;
    pthread_join(t->accept_thread, NULL);
    t->accepting = false;
    close(t->listen_fd);
    t->listen_fd = -1;
}

unsigned kc__wh_tls_connections(kc__wh_tls *t)
{
    pthread_mutex_lock(&t->mu);
    unsigned n = t->conns;
    pthread_mutex_unlock(&t->mu);
    return n;
}

void kc__wh_tls_free(kc__wh_tls *t)
{
    if (!t)
        return;
    kc__wh_tls_stop_accepting(t);
    if (t->listen_fd >= 0)
        close(t->listen_fd);
    atomic_store(&t->stopping, true);
    uint64_t one = 1;
    if (t->stop_fd >= 0 && write(t->stop_fd, &one, sizeof one) < 0)
        kc__log(KC_LOG_LEVEL_DEBUG, "webhook", "stop eventfd: %s", strerror(errno));
    /* Relays end when MHD closed their socketpair, or within STOP_GRACE of the stop signal. */
    pthread_mutex_lock(&t->mu);
    while (t->conns > 0)
        pthread_cond_wait(&t->cond, &t->mu);
    pthread_mutex_unlock(&t->mu);
    if (t->stop_fd >= 0)
        close(t->stop_fd);
    if (t->accept_stop_fd >= 0)
        close(t->accept_stop_fd);
    SSL_CTX_free(t->ctx);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
