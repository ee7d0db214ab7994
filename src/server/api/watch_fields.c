/*
 * watch_fields.c — a watch filter's field selector against one object of a published event,
 * through the event's memo (kc__ev_memo, storage/hub.h): each field a selector names is located in
 * the object once per event, whatever the number of watchers testing it. 100 node agents
 * watching spec.nodeName=<node> otherwise located spec.nodeName 200 times per pod event (the old
 * and the new state), which made their watches cost the server more than GET-per-pod agents
 * (bench_node_agents). The memo is keyed by the JSON Pointer the selector computed when it was
 * parsed and hands to its lookup (kc_field_selector_pointer), so nothing here re-derives it. Runs
 * under the hub's lock during one publish, so the memo needs no lock.
 */
#include "server/api/api_internal.h"

#include <string.h>

/* kc_field_lookup_fn over one object of a published event: the memo is keyed by the JSON
 * Pointer the selector computed at parse time (kc_field_selector_pointer; equal for equal paths
 * across watchers), so each field is located once per event, whatever the number of watchers
 * testing it. */
typedef struct memo_lookup {
    const kc_field_selector *sel;
    const kc_obj *o;
    kc__ev_field *f;
    size_t *n;
} memo_lookup;

static bool memo_get(void *ud, const char *field, size_t i, const char **raw, size_t *len)
{
    (void)field;
    memo_lookup *m = ud;
    const char *pointer = kc_field_selector_pointer(m->sel, i);
    for (size_t k = 0; k < *m->n; k++) {
        if (strcmp(m->f[k].pointer, pointer) == 0) {
            *raw = m->f[k].raw;
            *len = m->f[k].len;
            return *raw != NULL;
        }
    }
    const char *r = NULL;
    size_t l = 0;
    if (kc_obj_get_raw(m->o, pointer, &r, &l, NULL) < 0)
        r = NULL, l = 0;
    if (*m->n < KC__EV_MEMO_MAX)
        m->f[(*m->n)++] = (kc__ev_field){pointer, r, l};
    *raw = r;
    *len = l;
    return r != NULL;
}

bool kc__watch_fields_match(const kc_field_selector *fs, const kc_obj *o, kc__ev_memo *memo,
                            int slot)
{
    if (!memo || kc_field_selector_empty(fs))
        return kc_field_selector_match(fs, o);
    memo_lookup m = {fs, o, memo->f[slot], &memo->n[slot]};
    return kc_field_selector_match_fn(fs, memo_get, &m);
}

const char *kc__watch_node_pin(const kc_field_selector *fs, const char **ret_pointer)
{
    size_t n = kc_field_selector_count(fs);
    const char *value = kc_field_selector_exact(fs, "spec.nodeName");
    *ret_pointer = NULL;
    for (size_t i = 0; value && i < n; i++)
        if (strcmp(kc_field_selector_field(fs, i), "spec.nodeName") == 0 &&
            (*ret_pointer = kc_field_selector_pointer(fs, i)) != NULL)
            return value;
    return NULL;
}
