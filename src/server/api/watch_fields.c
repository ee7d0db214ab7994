/*
 * watch_fields.c — a watch filter's field selector against one object of a published event,
 * through the event's memo (kc__ev_memo, storage/hub.h): each field a selector names is located in
 * the object once per event, whatever the number of watchers testing it. 100 node agents
 * watching spec.nodeName=<node> otherwise located spec.nodeName 200 times per pod event (the old
 * and the new state), which made their watches cost the server more than GET-per-pod agents
 * (bench_node_agents). Runs under the hub's lock during one publish, so the memo needs no lock.
 */
#include "server/api/api_internal.h"

#include <string.h>

/* kc_field_lookup_fn over one object of a published event: each field is located once per
 * event, whatever the number of watchers testing it (100 kubelet-like watchers with
 * spec.nodeName=… each located it again in every pod event). */
typedef struct memo_lookup {
    const kc_obj *o;
    kc__ev_field *f;
    size_t *n;
} memo_lookup;

static bool memo_get(void *ud, const char *field, size_t i, const char **raw, size_t *len)
{
    (void)i;
    memo_lookup *m = ud;
    for (size_t k = 0; k < *m->n; k++) {
        if (strcmp(m->f[k].field, field) == 0) {
            *raw = m->f[k].raw;
            *len = m->f[k].len;
            return *raw != NULL;
        }
    }
    char ptr[300];
    size_t j = 0;
    ptr[j++] = '/';
    for (const char *c = field; *c && j < sizeof ptr - 2; c++) { /* a JSON Pointer (RFC 6901) */
        if (*c == '~' || *c == '/') {
            ptr[j++] = '~';
            ptr[j++] = *c == '~' ? '0' : '1';
        } else {
            ptr[j++] = *c == '.' ? '/' : *c;
        }
    }
    ptr[j] = '\0';
    const char *r = NULL;
    size_t l = 0;
    if (kc_obj_get_raw(m->o, ptr, &r, &l, NULL) < 0)
        r = NULL, l = 0;
    if (*m->n < KC__EV_MEMO_MAX)
        m->f[(*m->n)++] = (kc__ev_field){field, r, l};
    *raw = r;
    *len = l;
    return r != NULL;
}

bool kc__watch_fields_match(const kc_field_selector *fs, const kc_obj *o, kc__ev_memo *memo,
                            int slot)
{
    if (!memo || kc_field_selector_empty(fs))
        return kc_field_selector_match(fs, o);
    memo_lookup m = {o, memo->f[slot], &memo->n[slot]};
    return kc_field_selector_match_fn(fs, memo_get, &m);
}
