/*
 * cancel.c — kc_cancel: a cancellation token fired from any thread.
 *
 * The fired flag is atomic (cheap to poll). A transfer in progress registers the curl multi handle
 * it sleeps in; kc_cancel_fire wakes it with curl_multi_wakeup (documented thread-safe), under the
 * token's mutex so the registration cannot go away in between. Registrations form an intrusive
 * list (nodes on the transfers' stacks), so one token can stop any number of transfers.
 */
#include "http/internal.h"

#include <curl/curl.h>
#include <stdlib.h>

struct kc_cancel {
    atomic_bool fired;
    pthread_mutex_t mu; /* guards regs and wakeups */
    kc__cancel_reg *regs;
    size_t wakeups; /* curl_multi_wakeup calls made by kc_cancel_fire (tests observe it) */
};

int kc_cancel_new(kc_cancel **ret, kc_error *err)
{
    if (!ret)
        return kc_error_set(err, KC_EINVAL, "kc_cancel_new: ret is NULL");
    kc_cancel *c = calloc(1, sizeof *c);
    if (!c)
        return kc_error_set(err, KC_ENOMEM, "cancel token: out of memory");
    atomic_init(&c->fired, false);
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return kc_error_set(err, KC_ENOMEM, "cancel token: cannot initialise its mutex");
    }
    *ret = c;
    return 0;
}

void kc_cancel_fire(kc_cancel *c)
{
    if (!c)
        return;
    atomic_store(&c->fired, true);
    pthread_mutex_lock(&c->mu);
    for (kc__cancel_reg *r = c->regs; r; r = r->next) {
        curl_multi_wakeup(r->multi);
        c->wakeups++;
    }
    pthread_mutex_unlock(&c->mu);
}

size_t kc__cancel_wakeups(kc_cancel *c)
{
    pthread_mutex_lock(&c->mu);
    size_t n = c->wakeups;
    pthread_mutex_unlock(&c->mu);
    return n;
}

bool kc_cancel_fired(const kc_cancel *c)
{
    return c && atomic_load(&((kc_cancel *)c)->fired);
}

void kc_cancel_free(kc_cancel *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void kc__cancel_attach(kc_cancel *c, kc__cancel_reg *reg, void *multi)
{
    reg->multi = multi;
    reg->prev = NULL;
    pthread_mutex_lock(&c->mu);
    reg->next = c->regs;
    if (c->regs)
        c->regs->prev = reg;
    c->regs = reg;
    pthread_mutex_unlock(&c->mu);
}

void kc__cancel_detach(kc_cancel *c, kc__cancel_reg *reg)
{
    pthread_mutex_lock(&c->mu);
    if (reg->prev)
        reg->prev->next = reg->next;
    else
        c->regs = reg->next;
    if (reg->next)
        reg->next->prev = reg->prev;
    pthread_mutex_unlock(&c->mu);
}
