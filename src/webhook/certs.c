/*
 * webhook/certs.c — the serving certificate pair and its watcher (rules TLS1–TLS3, TLS6).
 *
 * Design: the pair in use is one immutable, reference-counted kc__wh_pair behind a mutex-guarded
 * pointer. A TLS handshake (tls.c's certificate callback) takes a reference, installs leaf, chain
 * and key on its SSL (OpenSSL takes its own references) and drops it; a reload builds a complete
 * new pair first and swaps the pointer, so a handshake sees either the old pair or the new one,
 * never a mix, and the old pair is freed by whoever drops the last reference.
 *
 * Watching: a poller thread checks both files every poll interval (default 10 s, TLS3). stat()
 * follows symlinks, so the kubelet's atomic symlink swap of a mounted Secret changes the inode it
 * sees; the files are re-read when device, inode, size or mtime (ns) of either changed, and at
 * least every 10 s whatever the stamps say (TLS3's ticker). No inotify: the poll is the bound
 * TLS6 asks for ("never cache longer than the poll interval") and it sees symlink swaps without
 * re-arming watches. A read that fails (unreadable, not PEM, key not matching the leaf — e.g. the
 * window between a writer's rename of tls.crt and of tls.key) keeps the last good pair and counts
 * certwatcher_read_certificate_errors_total; the next poll tries again (the stamps are only
 * remembered after a good read). Every read counts certwatcher_read_certificate_total.
 */
#include "webhook/transport.h"

#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FORCED_READ_MS 10000

typedef struct stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
} stamp;

struct kc__wh_certs {
    char *cert_file, *key_file;
    int64_t poll_ms;
    pthread_mutex_t mu; /* guards cur, stamps, last_read_ns, stopping */
    pthread_cond_t cond;
    kc__wh_pair *cur;
    stamp st_cert, st_key;
    uint64_t last_read_ns;
    bool stopping, started;
    pthread_t thread;
    atomic_uint_fast64_t reads, errors;
};

void kc__wh_pair_unref(kc__wh_pair *p)
{
    if (!p || atomic_fetch_sub(&p->refs, 1) != 1)
        return;
    X509_free(p->leaf);
    sk_X509_pop_free(p->chain, X509_free);
    EVP_PKEY_free(p->key);
    free(p);
}

static int ssl_fail(kc_error *err, const char *file, const char *what)
{
    unsigned long e = ERR_get_error();
    char reason[256] = "no PEM data";
    if (e)
        ERR_error_string_n(e, reason, sizeof reason);
    ERR_clear_error();
    return kc_error_set(err, KC_ECONFIG, "webhook: %s: %s: %s", file, what, reason);
}

/* Read the chain of cert_file: the leaf first, then the intermediates. */
static int read_chain(const char *file, kc__wh_pair *p, kc_error *err)
{
    BIO *b = BIO_new_file(file, "r");
    if (!b)
        return ssl_fail(err, file, "cannot open the certificate");
    p->leaf = PEM_read_bio_X509(b, NULL, NULL, NULL);
    if (!p->leaf) {
        BIO_free(b);
        return ssl_fail(err, file, "not a PEM certificate");
    }
    p->chain = sk_X509_new_null();
    X509 *x;
    while (p->chain && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
        if (!sk_X509_push(p->chain, x)) {
            X509_free(x);
            break;
        }
    }
    ERR_clear_error(); /* the end of the file reads as "no start line" */
    BIO_free(b);
    if (!p->chain)
        return kc_error_set(err, KC_ENOMEM, "webhook: %s: out of memory", file);
    return 0;
}

static int load_pair(const char *cert_file, const char *key_file, kc__wh_pair **ret, kc_error *err)
{
    kc__wh_pair *p = calloc(1, sizeof(*p));
    if (!p)
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    atomic_init(&p->refs, 1);
    int rc = read_chain(cert_file, p, err);
    if (rc == 0) {
        BIO *b = BIO_new_file(key_file, "r");
        if (!b)
            rc = ssl_fail(err, key_file, "cannot open the key");
        else if (!(p->key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL)))
            rc = ssl_fail(err, key_file, "not a PEM private key");
        BIO_free(b);
    }
    if (rc == 0 && X509_check_private_key(p->leaf, p->key) != 1) {
        ERR_clear_error();
        rc = kc_error_set(err, KC_ECONFIG, "webhook: %s: the key does not match the certificate %s",
                          key_file, cert_file);
    }
    if (rc) {
        kc__wh_pair_unref(p);
        return rc;
    }
    *ret = p;
    return 0;
}

static void stamp_of(const char *file, stamp *s)
{
    struct stat st;
    memset(s, 0, sizeof(*s));
    if (stat(file, &st) == 0) {
        s->dev = st.st_dev;
        s->ino = st.st_ino;
        s->size = st.st_size;
        s->mtime = st.st_mtim;
    }
}

static bool stamp_eq(const stamp *a, const stamp *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* One read of both files: swap on success, count either way. */
static int reload(kc__wh_certs *c, kc_error *err)
{
    stamp sc, sk;
    stamp_of(c->cert_file, &sc);
    stamp_of(c->key_file, &sk);
    kc__wh_pair *p = NULL;
    atomic_fetch_add(&c->reads, 1);
    int rc = load_pair(c->cert_file, c->key_file, &p, err);
    if (rc) {
        atomic_fetch_add(&c->errors, 1);
        pthread_mutex_lock(&c->mu);
        c->last_read_ns = kc__now_ns();
        pthread_mutex_unlock(&c->mu);
        return rc;
    }
    pthread_mutex_lock(&c->mu);
    kc__wh_pair *old = c->cur;
    c->cur = p;
    c->st_cert = sc;
    c->st_key = sk;
    c->last_read_ns = kc__now_ns();
    pthread_mutex_unlock(&c->mu);
    kc__wh_pair_unref(old);
    return 0;
}

int kc__wh_certs_reload(kc__wh_certs *c, kc_error *err)
{
    return reload(c, err);
}

kc__wh_pair *kc__wh_certs_get(kc__wh_certs *c)
{
    pthread_mutex_lock(&c->mu);
    kc__wh_pair *p = c->cur;
    atomic_fetch_add(&p->refs, 1);
    pthread_mutex_unlock(&c->mu);
    return p;
}

void kc__wh_certs_counts(kc__wh_certs *c, uint64_t *reads, uint64_t *errors)
{
    *reads = atomic_load(&c->reads);
    *errors = atomic_load(&c->errors);
}

static void *poller(void *arg)
{
    kc__wh_certs *c = arg;
    pthread_mutex_lock(&c->mu);
    while (!c->stopping) {
        uint64_t deadline = kc__deadline_after_ms(c->poll_ms);
        while (!c->stopping && kc__cond_wait_until(&c->cond, &c->mu, deadline) == 0)
            ;
        if (c->stopping)
            break;
        stamp sc, sk;
        stamp_of(c->cert_file, &sc);
        stamp_of(c->key_file, &sk);
        bool due = !stamp_eq(&sc, &c->st_cert) || !stamp_eq(&sk, &c->st_key) ||
                   kc__now_ns() - c->last_read_ns >= FORCED_READ_MS * KC__NS_PER_MS;
        if (!due)
            continue;
        pthread_mutex_unlock(&c->mu);
        kc_error e = KC_ERROR_INIT;
        if (reload(c, &e) < 0)
            kc__log(KC_LOG_LEVEL_WARN, "webhook",
                    "certificate reload failed, keeping the old pair: %s", e.message);
        kc_error_clear(&e);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

int kc__wh_certs_new(const char *cert_file, const char *key_file, int64_t poll_ms,
                     kc__wh_certs **ret, kc_error *err)
{
    kc__wh_certs *c = calloc(1, sizeof(*c));
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    c->cert_file = kc__strdup(cert_file);
    c->key_file = kc__strdup(key_file);
    c->poll_ms = poll_ms > 0 ? poll_ms : 10000;
    pthread_mutex_init(&c->mu, NULL);
    kc__cond_init_monotonic(&c->cond);
    if (!c->cert_file || !c->key_file) {
        kc__wh_certs_free(c);
        return kc_error_set(err, KC_ENOMEM, "webhook: out of memory");
    }
    int rc = reload(c, err);
    if (rc) {
        kc__wh_certs_free(c);
        return rc;
    }
    *ret = c;
    return 0;
}

int kc__wh_certs_start(kc__wh_certs *c)
{
    if (pthread_create(&c->thread, NULL, poller, c) != 0)
        return KC_ENOMEM;
    c->started = true;
    return 0;
}

void kc__wh_certs_free(kc__wh_certs *c)
{
    if (!c)
        return;
    if (c->started) {
        pthread_mutex_lock(&c->mu);
        c->stopping = true;
        pthread_cond_broadcast(&c->cond);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
    }
    kc__wh_pair_unref(c->cur);
    pthread_cond_destroy(&c->cond);
    pthread_mutex_destroy(&c->mu);
    free(c->cert_file);
    free(c->key_file);
    free(c);
}
