/*
 * admission.h — what the admission room (src/server/admission/: admission webhooks as
 * kube-apiserver calls them) gives the api room: one admission of one write. The verbs describe
 * the write (kc__adm_attrs), take a snapshot of the stored webhook configurations with
 * kc__adm_begin (it takes and releases srv->mu: never call it with mu held), run the mutating
 * chain on the object before the server's own defaulting and validation (kc__adm_mutate), and the
 * validating webhooks on the object the write would store (kc__adm_validate); neither holds mu
 * while a webhook is called. Denials and call failures come back as a kc_error with the real
 * server's Status (docs/server.md, "Admission webhooks"). Not installed.
 */
#ifndef KC_SERVER_ADMISSION_H
#define KC_SERVER_ADMISSION_H

#include "server/storage/storage.h"

typedef struct kc__adm_chain kc__adm_chain;

/* One write as admission sees it; every pointer borrowed for the admission's life. */
typedef struct kc__adm_attrs {
    const kc__rsrc *r;
    const char *version; /* the request's version */
    const char *sub;     /* subresource ("status", "scale"), NULL or "" for the resource itself */
    const char *ns;      /* "" for cluster-scoped objects */
    const char *name;    /* "" when the name is generated */
    const char *op;      /* "CREATE", "UPDATE", "DELETE" or "CONNECT" */
    bool dry_run;
    const json_t *old;     /* the stored object (UPDATE, DELETE), else NULL */
    const json_t *options; /* CreateOptions / UpdateOptions / DeleteOptions, or NULL */
    const json_t *user_info; /* request.userInfo (who sent it), NULL = the default admin */
    /* a webhook's warning, for the reply's Warning headers (duplicates already dropped) */
    void (*warn)(void *ctx, const char *text);
    void *warn_ctx;
} kc__adm_attrs;

/* Parse the --webhook-service mappings "NAME.NAMESPACE:PORT=HOST:PORT[,…]" (config.c);
 * KC_EINVAL naming the bad entry. text NULL or "" is valid (no mapping). */
int kc__adm_services_check(const char *text, kc_error *err);

/* May the request call a webhook (mu NOT held; takes it briefly)? A write (write true) while some
 * webhook configuration is stored, or any request for a custom resource at a version other than
 * its storage version (a conversion webhook). The http room then runs it on a helper thread, so
 * a slow webhook never holds an epoll thread. */
bool kc__adm_may_call(kc_server *srv, bool write, const char *group, const char *version,
                      const char *plural);

/* Snapshot the configurations (mu NOT held; takes it briefly). *ret = NULL when no webhook
 * configuration is stored: nothing to do. Errors: KC_ENOMEM. Release with kc__adm_end. */
int kc__adm_begin(kc_server *srv, const kc__adm_attrs *a, kc__adm_chain **ret, kc_error *err);
/* The stored object and the operation, once the verb has read them (UPDATE / DELETE; a patch or
 * an apply that creates is a CREATE with old NULL: AR4). old borrowed until kc__adm_end. */
void kc__adm_set_old(kc__adm_chain *c, const char *op, const json_t *old);
/* The kind the object sent is of when it is not the resource's (AR2: autoscaling/v1 Scale for
 * the scale subresource); strings borrowed. Such an object is not defaulted again (CH3). */
void kc__adm_set_kind(kc__adm_chain *c, const char *group, const char *version, const char *kind);
/* The operation's options object (AR7), taken over (NULL: none). */
void kc__adm_set_options(kc__adm_chain *c, json_t *options);
/* true when some validating webhook may apply (the verb then has to compute the object it would
 * store: a dry run). */
bool kc__adm_has_validating(const kc__adm_chain *c);
/* The mutating chain (CH2–CH5, CH7–CH15) on *inout (replaced by the patched object; NULL on
 * DELETE). mu NOT held. Errors: the request's Status in err. */
int kc__adm_mutate(kc__adm_chain *c, json_t **inout, kc_error *err);
/* The validating webhooks (CH6) on obj (NULL on DELETE). mu NOT held. */
int kc__adm_validate(kc__adm_chain *c, const json_t *obj, kc_error *err);
void kc__adm_end(kc__adm_chain *c);

/* ---- CRD conversion webhooks (convert.c) ------------------------------------------------------
 */

typedef struct kc__conv kc__conv;
/* The conversion webhook of r's CRD (mu NOT held; takes it briefly): *ret NULL when r is not a
 * custom resource or its CRD's strategy is not Webhook. Errors: KC_ENOMEM. */
int kc__conv_begin(kc_server *srv, const kc__rsrc *r, kc__conv **ret, kc_error *err);
/* docs[0..n) not already at apiVersion desired ("group/version") converted by one call, in place
 * (CV2–CV6); mu NOT held. Errors: 500 InternalError `conversion webhook for … failed: …` (CV8). */
int kc__conv_docs(kc__conv *cv, json_t **docs, size_t n, const char *desired, kc_error *err);
void kc__conv_end(kc__conv *cv);

#endif
