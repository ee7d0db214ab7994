/*
 * admission_internal.h — what the admission room's files share: the snapshot of one admission
 * (the stored configurations, the webhooks in call order, the namespace's labels), matching
 * (match.c), one webhook call (call.c) and the service mappings (config.c).
 */
#ifndef KC_SERVER_ADMISSION_INTERNAL_H
#define KC_SERVER_ADMISSION_INTERNAL_H

#include "server/admission/admission.h"

/* One webhook of a configuration, its fields with the v1 defaults applied. */
typedef struct kc__adm_hook {
    const json_t *def; /* the webhook (borrowed from chain->configs) */
    const char *name;
    bool mutating;
    bool ignore;   /* failurePolicy: Ignore (default Fail) */
    bool reinvoke; /* reinvocationPolicy: IfNeeded (default Never) */
    int timeout_s; /* timeoutSeconds, 1..30, default 10 (CH13) */
    int index;     /* position among the webhooks of its kind (CH11's annotation) */
} kc__adm_hook;

#define KC__ADM_MAX_WARNINGS 64

struct kc__adm_chain {
    kc_server *srv;
    kc__adm_attrs a;
    json_t *configs; /* the configuration documents (owned) */
    kc__adm_hook *mut, *val;
    size_t n_mut, n_val;
    const char *kind_group, *kind_version, *kind; /* kc__adm_set_kind; NULL = the resource's */
    json_t *options;                  /* the operation's options (owned; a.options points at it) */
    json_t *ns_labels;                /* the stored namespace's labels (owned), NULL when none */
    bool ns_missing;                  /* the request's namespace does not exist */
    char *services;                   /* copy of the server's webhook_services */
    char *seen[KC__ADM_MAX_WARNINGS]; /* warnings already passed on (AR13: duplicates dropped) */
    size_t n_seen;
    unsigned failed_open; /* failurePolicy Ignore skips (CH11), for the log */
};

/* MW1–MW7: should h be called for the chain's request with obj (NULL on DELETE)? Errors: 404
 * when a rule matched and the namespace does not exist (MW5 d). */
int kc__adm_match(const kc__adm_chain *c, const kc__adm_hook *h, const json_t *obj, bool *ret,
                  kc_error *err);
/* A LabelSelector (matchLabels, matchExpressions) against labels (NULL = none): MW5, MW6. An
 * absent or empty selector matches everything. */
bool kc__adm_selector_match(const json_t *sel, const json_t *labels);

/* One call of h with obj (CH9, CH13, AR1–AR12, MW10–MW12). 0: *ret_resp is the review's
 * `response` (new reference), verified. Otherwise a call failure: *ret_reason (malloc'd) is the
 * text after `failed calling webhook "NAME": `. */
int kc__adm_call(const kc__adm_chain *c, const kc__adm_hook *h, const json_t *obj,
                 json_t **ret_resp, char **ret_reason);

/* A reply body, bounded (16 MiB). */
typedef struct kc__adm_buf {
    char *p;
    size_t n;
    bool over;
} kc__adm_buf;

/* The URL of clientConfig cc (MW11; with ?timeout=Ns unless timeout_s is 0, then a Service's path
 * defaults to "/": CV1) and, for a Service, the CONNECT_TO entry of its mapping in services (""
 * for a url). NULL with *reason (malloc'd) when there is none. */
char *kc__adm_target(const char *services, const json_t *cc, int timeout_s, char *connect_to,
                     size_t cap, char **reason);
/* POST body to url under timeout_s, TLS verified against cc's caBundle (MW12); 0 with the reply in
 * *b (HTTP 200–206), else *reason (malloc'd) worded as Go's client (CH9). */
int kc__adm_post(const json_t *cc, const char *url, const char *connect_to, int timeout_s,
                 const char *body, kc__adm_buf *b, char **reason);
/* A fresh v4 uuid; vasprintf into a new string (NULL on ENOMEM). */
void kc__adm_uid(char out[37]);
char *kc__adm_fmt(const char *f, ...) KC__PRINTF(1, 2);

/* The loopback address "HOST:PORT" a Service NAME.NAMESPACE:PORT maps to (from text, the
 * --webhook-service list) into out; false when it is not mapped. */
bool kc__adm_service_lookup(const char *text, const char *name, const char *ns, int port, char *out,
                            size_t cap);

#endif
