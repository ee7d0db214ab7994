/*
 * rest/pager.c — a paged LIST with the next page requested while this one arrives, and decoding
 * overlapped with both (kc__client_list_pipelined).
 *
 * kc_client_list_all downloads a page, decodes it, then asks for the next one: the connection
 * idles while the client decodes, and the server idles while the page travels. Here two fetcher
 * threads (the caller and a helper) take pages in turn and a worker thread decodes them:
 *
 *   fetcher A: GET page 0 ─head─────────────── hand 0 ─ GET page 2 ─head──────── hand 2 …
 *   fetcher B:              GET page 1 ─head─────────── hand 1 ─ GET page 3 ─────…
 *   worker:                                    decode 0 ──  decode 1 ──   decode 2 ──
 *
 * The continue token of page k is needed before page k+1 can be asked for; it is in the list's
 * metadata, which servers write before items (Go's encoder writes struct fields in order), so it
 * is read from the head of the body as soon as `"items":[` has arrived (the transport's on_body
 * hook): the members before it plus `"items":[]}` are decoded as a list of no items
 * (kc_list_decode, a few hundred bytes). While page k's items are still on the wire the server
 * already prepares page k+1 — against kube-apiserver that is the etcd read and encoding of the
 * next page, here the embedded server's copy of it (1-2 ms a page, measured with curl's
 * time-to-first-byte: 40 % of a page's download). The full decode of a page stays authoritative:
 * when its head shows no continue token (the last page, or metadata after items), the next page
 * waits for the decode's token; a decoded token that differs from the head's is a parse error.
 *
 * Pages are handed to the worker strictly in order, one at a time. Three response buffers
 * rotate (two being received, one being decoded). The helper starts as soon as page 1 can be asked
 * for — from page 0's head, while page 0 is still arriving — so no set-up stands between the
 * two requests (sizing the spare buffers first, as an earlier version did, kept page 1 waiting
 * 10-20 ms while they were populated). Each buffer is sized once, by the transport, from the
 * Content-Length of the first page it receives (kc__buf.huge: 2 MiB or more is its own mapping in
 * whole 2 MiB, populated in one call, on huge pages where that is cheaper — 4-5 us per 4 KiB of
 * first touch on small pages here, core/buf.c), and reused for later pages, which are about the
 * same size; the bodies carry KC_DECODE_PADDING spare bytes, so the worker parses them in place
 * (KC_DECODE_INPUT_PADDED). Because a helper-grown buffer of 2 MiB or more is a mapping, it is
 * unmapped after the list rather than left in the helper's glibc arena (a smaller one is malloc'd
 * there; with pages of 100 Pods the RSS after a relist measured the same). A list whose first page
 * is its last (a server ignoring limit: 600 MB for 100k Pods) starts no helper. While page 0 is
 * on the wire the worker takes its first chunk of the object arena (kc__slab_prepare), which its
 * first objects would otherwise wait for.
 *
 * Bounded: page opts->max_pages (when set) still having a continue token fails the walk with
 * KC_ETOOLARGE before another page is asked for (continue tokens that never end, issue 29 point 4).
 *
 * Ordering and errors: on_item runs on the worker, page after page, in order, never concurrently.
 * The first failure (request, decode, callback, cancel) stops every thread; a request already in
 * flight on the other fetcher completes and is dropped. The caller joins the helper and waits for
 * the worker before returning, so no callback runs after the call returns. When the helper cannot
 * start, the caller fetches alone (requests in sequence, decoding still overlapped).
 */
#include "rest/internal.h"
#include "core/slab.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NBUF      3
#define HEAD_SCAN 65536 /* the list metadata is within the first 64 KiB, or not read early */

typedef struct pbuf {
    kc__http_resp resp;
    bool busy; /* being received, waiting to be handed, or being decoded */
} pbuf;

typedef struct pager {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* the request: the first page's options (later pages drop the resourceVersion) */
    kc_client *c;
    const kc_gvr *gvr;
    const char *ns;
    const kc_list_opts *o;
    const char *accept;
    /* the schedule, guarded by mu */
    long next;     /* the next page to be asked for */
    int tok_state; /* of page `next`: 0 not known yet, 1 known (tok; NULL for page 0), 2 no more */
    char *tok;     /* its continue token (owned) */
    long handed;   /* pages handed to the worker */
    long decoded;  /* pages the worker finished */
    bool stop;     /* a failure: every thread winds down */
    int rc;        /* the first failure */
    kc_error err;  /* its detail */
    pbuf bufs[NBUF];
    /* the worker's job */
    pbuf *job;      /* NULL when the worker is idle */
    char *job_peek; /* the token read from the job's head (owned; NULL: none was read) */
    bool quit;
    bool helper_tried, helper_started; /* the helper fetcher: started after the first page */
    pthread_t helper;
    kc_list_meta meta; /* metadata of the last page decoded */
    kc_list_decoder *dec;
    kc_list_item_cb on_item;
    void *ud;
} pager;

/* Record the first failure (moving *e's detail when it is the first) and stop every thread.
 * Called with mu held. */
static void fail_locked(pager *p, int rc, kc_error *e)
{
    if (!p->rc) {
        p->rc = rc;
        kc_error_clear(&p->err);
        if (e) {
            p->err = *e;
            kc_error_init(e);
        }
    }
    if (e)
        kc_error_clear(e);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
}

static void *worker_main(void *arg)
{
    pager *p = arg;
    kc__slab_prepare(); /* the objects' first chunk, while page 0 is on the wire (core/slab.h) */
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->job && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->job)
            break;
        pbuf *b = p->job;
        pthread_mutex_unlock(&p->mu);
        kc_list_meta m = {0};
        m.remaining_item_count = -1;
        kc_error e = KC_ERROR_INIT;
        const kc__buf *body = &b->resp.body;
        int rc = kc_list_decoder_decode(p->dec, body->data ? body->data : "", body->len, &m,
                                        p->on_item, p->ud, &e);
        pthread_mutex_lock(&p->mu);
        if (!rc && p->job_peek && (!m.continue_token || strcmp(m.continue_token, p->job_peek)))
            rc = kc_error_set(&e, KC_EPARSE,
                              "list: the continue token of a page's head "
                              "differs from the decoded one");
        if (rc)
            fail_locked(p, rc, &e);
        kc_error_clear(&e);
        kc_list_meta_clear(&p->meta);
        p->meta = m;
        free(p->job_peek);
        p->job_peek = NULL;
        b->busy = false;
        p->job = NULL;
        p->decoded++;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    kc__slab_release_thread(); /* the objects' arena chunk (core/slab.h) */
    return NULL;
}

static void *helper_main(void *arg);

static _Atomic uint64_t helpers_started, helper_start_len;

uint64_t kc__pager_helpers_started(void)
{
    return atomic_load_explicit(&helpers_started, memory_order_relaxed);
}

uint64_t kc__pager_helper_start_len(void)
{
    return atomic_load_explicit(&helper_start_len, memory_order_relaxed);
}

/* Start the helper fetcher (once), as soon as page 1 can be asked for; page 0 has `len` bytes of
 * its body in. Called with mu held, by the caller (from page 0's head, or after page 0's decode
 * when its head showed no token). */
static void start_helper(pager *p, size_t len)
{
    p->helper_tried = true;
    atomic_store_explicit(&helper_start_len, len, memory_order_relaxed);
    p->helper_started = pthread_create(&p->helper, NULL, helper_main, p) == 0;
    if (p->helper_started)
        atomic_fetch_add_explicit(&helpers_started, 1, memory_order_relaxed);
}

/* The continue token from a body's head ending at `at` (malloc'd; NULL when the head shows none
 * or cannot be read: the full decode then decides). */
static char *head_continue(const char *data, const char *at)
{
    kc__buf head = KC__BUF_INIT(0);
    char *cont = NULL;
    kc_list_meta m = {0};
    if (kc__buf_append(&head, data, (size_t)(at - data)) == 0 &&
        kc__buf_append_str(&head, "\"items\":[]}") == 0 &&
        kc_list_decode(head.data, head.len, NULL, &m, NULL, NULL, NULL) == 0 && m.continue_token &&
        *m.continue_token) {
        cont = m.continue_token;
        m.continue_token = NULL;
    }
    kc_list_meta_clear(&m);
    kc__buf_free(&head);
    return cont;
}

/* One page's head watch: the transport calls on_body as the body grows. */
typedef struct headw {
    pager *p;
    long page;
    size_t scanned; /* bytes searched for `"items":[` */
    bool done;
    char *peek; /* the token published for the next page (a copy, owned; NULL: none) */
} headw;

static void on_body(void *ud, const kc__buf *body)
{
    static const char items[] = "\"items\":[";
    headw *h = ud;
    if (h->done || !body->data)
        return;
    size_t end = body->len < HEAD_SCAN ? body->len : HEAD_SCAN;
    size_t from = h->scanned > sizeof(items) ? h->scanned - sizeof(items) : 0;
    const char *at =
        end > from ? memmem(body->data + from, end - from, items, sizeof items - 1) : NULL;
    h->scanned = end;
    if (!at) {
        h->done = end >= HEAD_SCAN;
        return;
    }
    h->done = true;
    char *tok = head_continue(body->data, at);
    char *copy = tok ? strdup(tok) : NULL;
    if (!tok || !copy) { /* no token in the head (or no memory): the full decode decides */
        free(tok);
        free(copy);
        return;
    }
    pager *p = h->p;
    pthread_mutex_lock(&p->mu);
    if (p->next == h->page + 1 && p->tok_state == 0) {
        p->tok = tok;
        p->tok_state = 1;
        h->peek = copy;
        if (h->page == 0 && !p->helper_tried)
            start_helper(p, body->len); /* page 0 is the caller's: page 1 goes out now */
        pthread_cond_broadcast(&p->cv);
    } else {
        free(tok);
        free(copy);
    }
    pthread_mutex_unlock(&p->mu);
}

/* A free buffer, or NULL. Called with mu held. */
static pbuf *free_buf(pager *p)
{
    for (int i = 0; i < NBUF; i++)
        if (!p->bufs[i].busy)
            return &p->bufs[i];
    return NULL;
}

/* Give the worker page k in b, in order; when its head showed no token, wait for its decode and
 * publish the decoded one (or the end). Called with mu held; false when stopped. */
static bool hand_in_order(pager *p, long k, pbuf *b, headw *h)
{
    while (!p->stop && (p->handed != k || p->job))
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->stop)
        return false;
    p->job = b;
    p->job_peek = h->peek;
    h->peek = NULL;
    p->handed++;
    pthread_cond_broadcast(&p->cv);
    if (p->next != k + 1 || p->tok_state != 0)
        return true; /* the head's token was published */
    while (!p->stop && p->decoded <= k)
        pthread_cond_wait(&p->cv, &p->mu);
    if (p->stop)
        return false;
    char *t = p->meta.continue_token;
    p->meta.continue_token = NULL;
    if (t && *t) {
        p->tok = t;
        p->tok_state = 1;
    } else {
        free(t);
        p->tok_state = 2;
    }
    pthread_cond_broadcast(&p->cv);
    return true;
}

/* Fetch one page's body into b; 0 or a failure (detail in *e). */
static int fetch(pager *p, long k, const char *tok, pbuf *b, headw *h, kc_error *e)
{
    kc_list_opts o = *p->o;
    o.continue_token = tok;
    if (k > 0) { /* a continue token carries the snapshot RV: later pages must not pin another */
        o.resource_version = NULL;
        o.resource_version_match = NULL;
    }
    if (o.cancel && kc_cancel_fired(o.cancel))
        return kc_error_set(e, KC_ECANCELED, "list cancelled");
    int rc = kc__list_call_watched(p->c, p->gvr, p->ns, &o, p->accept, on_body, h, &b->resp, e);
    /* the transport reserved the decoder's padding; grow it in the rare case it did not (no
     * Content-Length) */
    kc__buf *body = &b->resp.body;
    if (!rc && body->cap < body->len + 1 + KC_DECODE_PADDING &&
        kc__buf_reserve(body, KC_DECODE_PADDING))
        rc = kc_error_set(e, KC_ENOMEM, "out of memory");
    return rc;
}

/* A fetcher: take the next page whose token is known, fetch it, hand it over; until the end or a
 * failure. Run by the caller (which starts the helper from its first page's head, or after that
 * page when its head showed no token) and the helper. */
static void fetch_loop(pager *p, bool caller)
{
    pthread_mutex_lock(&p->mu);
    for (;;) {
        pbuf *b = NULL;
        while (!p->stop && (p->tok_state == 0 || (p->tok_state == 1 && !(b = free_buf(p)))))
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->tok_state == 2)
            break;
        long k = p->next;
        if (p->o->max_pages > 0 && k >= p->o->max_pages) { /* page max_pages has a token */
            kc_error e = KC_ERROR_INIT;
            fail_locked(p, kc__list_pages_exceeded(p->gvr, p->o, &e), &e);
            break;
        }
        p->next++;
        char *tok = p->tok;
        p->tok = NULL;
        p->tok_state = 0;
        b->busy = true;
        pthread_mutex_unlock(&p->mu);
        headw h = {.p = p, .page = k};
        kc_error e = KC_ERROR_INIT;
        int rc = fetch(p, k, tok, b, &h, &e);
        free(tok);
        pthread_mutex_lock(&p->mu);
        if (rc)
            fail_locked(p, rc, &e);
        bool ok = !rc && hand_in_order(p, k, b, &h);
        free(h.peek);
        if (!ok) {
            b->busy = p->job == b;
            break;
        }
        if (caller && !p->helper_tried && p->tok_state != 2) /* not for a list of one page */
            start_helper(p, b->resp.body.len);
    }
    pthread_mutex_unlock(&p->mu);
}

static void *helper_main(void *arg)
{
    fetch_loop(arg, false);
    return NULL;
}

static void pager_destroy(pager *p)
{
    kc_list_meta_clear(&p->meta);
    kc_error_clear(&p->err);
    free(p->tok);
    free(p->job_peek);
    for (int i = 0; i < NBUF; i++)
        kc__http_resp_free(&p->bufs[i].resp);
    kc_list_decoder_free(p->dec);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}

int kc__client_list_pipelined(kc_client *c, const kc_gvr *gvr, const char *ns,
                              const kc_list_opts *opts, kc_list_meta *ret_meta,
                              kc_list_item_cb on_item, void *ud, kc_error *err)
{
    kc_list_opts o;
    int rc = kc__list_opts_paged(c, opts, &o, err);
    if (rc)
        return rc;
    kc_decode_opts d = kc__decode_opts(o.decode, o.metadata_only);
    d.flags |= KC_DECODE_INPUT_PADDED;
    pager p = {.c = c,
               .gvr = gvr,
               .ns = ns,
               .o = &o,
               .tok_state = 1,
               .on_item = on_item,
               .ud = ud,
               .err = KC_ERROR_INIT};
    p.accept = o.metadata_only ? KC__ACCEPT_PARTIAL_LIST : NULL;
    p.meta.remaining_item_count = -1;
    rc = kc_list_decoder_new(&d, &p.dec, err);
    if (rc)
        return rc;
    for (int i = 0; i < NBUF; i++) {
        kc__http_resp_init(&p.bufs[i].resp);
        p.bufs[i].resp.body.huge = true; /* reused for every page: on huge pages (core/buf.c) */
    }
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t worker;
    if (pthread_create(&worker, NULL, worker_main, &p) != 0) {
        pager_destroy(&p);
        return kc_client_list_all(c, gvr, ns, opts, ret_meta, on_item, ud, err);
    }
    fetch_loop(&p, true);
    if (p.helper_started) /* set by this thread only, so read without the lock */
        pthread_join(p.helper, NULL);
    pthread_mutex_lock(&p.mu);
    while (p.job)
        pthread_cond_wait(&p.cv, &p.mu);
    p.quit = true;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    pthread_join(worker, NULL);
    rc = p.rc;
    if (rc) {
        if (err) {
            kc_error_clear(err);
            *err = p.err;
            kc_error_init(&p.err);
        }
    } else if (ret_meta) {
        *ret_meta = p.meta;
        p.meta = (kc_list_meta){.remaining_item_count = -1};
    }
    pager_destroy(&p);
    return rc;
}
