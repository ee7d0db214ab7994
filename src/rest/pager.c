/*
 * rest/pager.c — a paged LIST with download and decode overlapped (kc__client_list_pipelined).
 *
 * kc_client_list_all downloads a page, decodes it, then asks for the next one: the connection
 * idles while the client decodes, and the decoder idles while the server and the socket work.
 * Here the calling thread downloads and a worker thread decodes:
 *
 *   caller: GET page 0 ─ peek continue ─ hand over ─ GET page 1 ─ peek ─ wait, hand over ─ GET …
 *   worker:                              decode page 0 ────────────     decode page 1 ──────
 *
 * The continue token of page k is needed before page k+1 can be asked for; it is in the list's
 * metadata, which servers write before items (Go's encoder writes struct fields in order), so it
 * is read from the head of the body: the members before `"items":[` plus `"items":[]}` are decoded
 * as a list of no items (kc_list_decode, a few hundred bytes). The full decode of the page on the
 * worker stays authoritative: when the head shows no continue token (the last page, or metadata
 * after items), the caller waits for the worker and uses the continue token the full decode found;
 * a token that differs from the head's is a parse error.
 *
 * Two response buffers alternate (the one being decoded, the one being received), so after the
 * first two pages no page allocates or faults in fresh memory for its body; the transport reserves
 * the body with KC_DECODE_PADDING spare bytes, so the worker parses it in place
 * (KC_DECODE_INPUT_PADDED) instead of copying it into the decoder's scratch.
 *
 * Ordering and errors: on_item runs on the worker, page after page, in order, never concurrently.
 * The first failure (request, decode, callback, cancel) stops the loop; the caller waits for the
 * worker before returning, so no callback runs after the call returns.
 */
#include "rest/internal.h"
#include "core/slab.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pager {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    kc__http_resp *job; /* the page to decode; NULL when the worker is idle */
    bool quit;
    int rc;            /* the worker's first failure */
    kc_error err;      /* its detail */
    kc_list_meta meta; /* metadata of the last page decoded */
    kc_list_decoder *dec;
    kc_list_item_cb on_item;
    void *ud;
} pager;

/* Hand src's detail to dst (may be NULL): a kc_error owns its strings, a struct copy moves them. */
static void err_move(kc_error *dst, kc_error *src)
{
    if (dst) {
        kc_error_clear(dst);
        *dst = *src;
        kc_error_init(src);
    } else {
        kc_error_clear(src);
    }
}

static void *pager_main(void *arg)
{
    pager *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->job && !p->quit)
            pthread_cond_wait(&p->cv, &p->mu);
        if (!p->job)
            break;
        kc__http_resp *r = p->job;
        pthread_mutex_unlock(&p->mu);
        kc_list_meta m = {0};
        m.remaining_item_count = -1;
        kc_error e = KC_ERROR_INIT;
        int rc = kc_list_decoder_decode(p->dec, r->body.data ? r->body.data : "", r->body.len, &m,
                                        p->on_item, p->ud, &e);
        pthread_mutex_lock(&p->mu);
        kc_list_meta_clear(&p->meta);
        p->meta = m;
        if (rc && !p->rc) {
            p->rc = rc;
            err_move(&p->err, &e);
        }
        kc_error_clear(&e);
        p->job = NULL;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    kc__slab_release_thread(); /* the objects' arena chunk (core/slab.h) */
    return NULL;
}

/* Wait until the worker is idle; its first failure (0 if none). */
static int pager_wait(pager *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->job)
        pthread_cond_wait(&p->cv, &p->mu);
    int rc = p->rc;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static void pager_give(pager *p, kc__http_resp *r)
{
    pthread_mutex_lock(&p->mu);
    p->job = r;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* The continue token from the body's head (malloc'd; NULL when the head shows none or cannot be
 * read: the full decode then decides). */
static char *peek_continue(const kc__buf *body)
{
    static const char items[] = "\"items\":[";
    size_t scan = body->len < 65536 ? body->len : 65536;
    const char *at = body->data ? memmem(body->data, scan, items, sizeof(items) - 1) : NULL;
    if (!at)
        return NULL;
    kc__buf head = KC__BUF_INIT(0);
    char *cont = NULL;
    kc_list_meta m = {0};
    if (kc__buf_append(&head, body->data, (size_t)(at - body->data)) == 0 &&
        kc__buf_append_str(&head, "\"items\":[]}") == 0 &&
        kc_list_decode(head.data, head.len, NULL, &m, NULL, NULL, NULL) == 0) {
        cont = m.continue_token;
        m.continue_token = NULL;
    }
    kc_list_meta_clear(&m);
    kc__buf_free(&head);
    return cont;
}

/* Give the worker a padded body (the transport reserved the padding; grow it in the rare case it
 * did not, e.g. no Content-Length). */
static int pager_hand(pager *p, kc__http_resp *r)
{
    if (r->body.cap < r->body.len + 1 + KC_DECODE_PADDING &&
        kc__buf_reserve(&r->body, KC_DECODE_PADDING))
        return KC_ENOMEM;
    pager_give(p, r);
    return 0;
}

/* The page loop on the calling thread. On return the worker is idle. */
static int pager_loop(pager *p, kc_client *c, const kc_gvr *gvr, const char *ns, kc_list_opts *o,
                      const char *accept, kc__http_resp resp[2], kc_error *err)
{
    char *cont = NULL;   /* the token this page is asked with */
    bool peeked = false; /* … read from the previous page's head: its full decode must agree */
    int rc = 0;
    for (int cur = 0;; cur ^= 1) {
        if (o->cancel && kc_cancel_fired(o->cancel)) {
            rc = kc_error_set(err, KC_ECANCELED, "list cancelled");
            break;
        }
        o->continue_token = cont;
        if ((rc = kc__get_call(c, gvr, ns, NULL, o, accept, &resp[cur], err)) != 0)
            break;
        /* A continue token carries the snapshot RV: later pages must not pin another one. */
        o->resource_version = NULL;
        o->resource_version_match = NULL;
        char *next = peek_continue(&resp[cur].body);
        if ((rc = pager_wait(p)) == 0 && peeked) {
            pthread_mutex_lock(&p->mu);
            const char *got = p->meta.continue_token;
            if (!got || strcmp(got, cont) != 0)
                rc = kc_error_set(err, KC_EPARSE,
                                  "list: the continue token of a page's head "
                                  "differs from the decoded one");
            pthread_mutex_unlock(&p->mu);
        }
        free(cont);
        cont = NULL;
        if (rc == 0 && pager_hand(p, &resp[cur]) != 0)
            rc = kc_error_set(err, KC_ENOMEM, "out of memory");
        if (rc) {
            free(next);
            break;
        }
        peeked = next != NULL;
        if (!next) { /* the last page, or a head without metadata: the full decode decides */
            if ((rc = pager_wait(p)) != 0)
                break;
            pthread_mutex_lock(&p->mu);
            next = p->meta.continue_token;
            p->meta.continue_token = NULL;
            pthread_mutex_unlock(&p->mu);
            if (!next || !*next) {
                free(next);
                break;
            }
        }
        cont = next;
    }
    free(cont);
    int wrc = pager_wait(p);
    if (wrc && !rc) {
        err_move(err, &p->err);
        rc = wrc;
    }
    return rc;
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
    pager p = {.on_item = on_item, .ud = ud, .err = KC_ERROR_INIT};
    p.meta.remaining_item_count = -1;
    rc = kc_list_decoder_new(&d, &p.dec, err);
    if (rc)
        return rc;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, pager_main, &p) != 0) {
        pthread_cond_destroy(&p.cv);
        pthread_mutex_destroy(&p.mu);
        kc_list_decoder_free(p.dec);
        return kc_client_list_all(c, gvr, ns, opts, ret_meta, on_item, ud, err);
    }
    kc__http_resp resp[2];
    kc__http_resp_init(&resp[0]);
    kc__http_resp_init(&resp[1]);
    rc =
        pager_loop(&p, c, gvr, ns, &o, o.metadata_only ? KC__ACCEPT_PARTIAL_LIST : NULL, resp, err);
    pthread_mutex_lock(&p.mu);
    p.quit = true;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    pthread_join(th, NULL);
    if (rc == 0 && ret_meta) {
        *ret_meta = p.meta;
        p.meta = (kc_list_meta){.remaining_item_count = -1};
    }
    kc_list_meta_clear(&p.meta);
    kc_error_clear(&p.err);
    kc__http_resp_free(&resp[0]);
    kc__http_resp_free(&resp[1]);
    kc_list_decoder_free(p.dec);
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    return rc;
}
