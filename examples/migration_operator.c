/*
 * migration_operator.c — a complete small operator: the field report's scenario end to end.
 *
 * A Migration (migrations.example.kcache.io/v1, namespaced, with a status subresource) asks for
 * a credentials Secret. The reconcile
 *   1. reads the Migration from the cache (gone or being deleted: nothing to do),
 *   2. creates or updates the Secret "<name>-credentials" (kc_cached_client_create_or_update,
 *      controllerutil.CreateOrUpdate): its mutate keeps an existing password or sets one
 *      (kc_base64_encode into data) and makes the Migration its controller
 *      (kc_doc_set_controller_reference); a Secret already right is not written,
 *   3. reads the Secret back from the cache — the step that failed for the mig-controller team:
 *      with read-your-writes (block-on-write, the default) the write returns only once the
 *      cache holds it, so this read never misses,
 *   4. sets the Migration's status — phase, secretName, observedGeneration and a Ready condition
 *      (kc_doc_condition_set: SetStatusCondition's rules) — with kc_cached_client_create_or_patch,
 *      which patches only the status subresource (KC_OP_UPDATED_STATUS_ONLY) and writes nothing
 *      when the status is already so: a second reconcile of a Ready Migration writes nothing.
 * Events on the Secret enqueue its owner (kc_controller_own); a generation predicate on the
 * Migration skips its own status writes. The controller starts only once its caches have synced.
 * It records core/v1 Events about the Migration (kc_event_recorder, never blocking the
 * reconcile): Normal SecretCreated when create-or-update created the Secret (SecretUpdated when
 * it had to repair it), Normal Ready when it set the status, Warning ReconcileFailed when a step
 * fails (retried). Before exit it flushes the recorder and prints its counters.
 *
 * Usage: migration_operator [--kubeconfig PATH] [-n NAMESPACE] [--count N]
 * Without --kubeconfig it starts the embedded API server in-process with watch events delayed
 * 10–500 ms (so a plain cache read after the create would miss the Secret). It installs the CRD
 * (already installed is fine), creates N sample Migrations (default 3), runs the controller until
 * every one is Ready, prints their status, then deletes the samples and their Secrets.
 */
#include <kcache.h>

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const kc_gvr migrations = {"example.kcache.io", "v1", "migrations"};
static const kc_gvr secrets = {"", "v1", "secrets"};
static const kc_gvr crds = {"apiextensions.k8s.io", "v1", "customresourcedefinitions"};

static const char crd_json[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"migrations.example.kcache.io\"},\"spec\":{\"group\":"
    "\"example.kcache.io\",\"scope\":\"Namespaced\",\"names\":{\"plural\":\"migrations\","
    "\"singular\":\"migration\",\"kind\":\"Migration\"},\"versions\":[{\"name\":\"v1\","
    "\"served\":true,\"storage\":true,\"subresources\":{\"status\":{}},\"schema\":{"
    "\"openAPIV3Schema\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

/* Progress shared with main: how many Migrations reached Ready (under mu). */
typedef struct op {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int ready;
    kc_event_recorder *rec; /* Events about the Migrations (thread-safe) */
} op;

static void report(const char *what, int rc, const kc_error *err)
{
    fprintf(stderr, "migration_operator: %s: %s: %s\n", what, kc_errno_name(rc),
            err && err->message ? err->message : kc_strerror(rc));
}

/* Step 2's mutate: the Secret as it should be, owned by the Migration (ud). Idempotent. */
static int secret_mutate(void *mig, kc_doc *s, const kc_obj *existing)
{
    static const char password[] = "example-only"; /* a real operator generates one */
    char *b64 = NULL;
    int rc = 0;
    if (!kc_doc_has(s, "/data/password") &&
        (rc = kc_base64_encode(password, strlen(password), &b64, NULL, NULL)) == 0)
        rc = kc_doc_set_string(s, "/data/password", b64, NULL);
    free(b64);
    return rc ? rc : kc_doc_set_controller_reference(s, mig, NULL);
}

/* Step 4's mutate: the status (and only the status) of the Migration, given its Secret's name. */
static int status_mutate(void *secret, kc_doc *m, const kc_obj *existing)
{
    if (!existing)
        return KC_ENOTFOUND; /* deleted meanwhile: never create one (the retry finds it gone) */
    int64_t gen = kc_obj_generation(existing);
    kc_condition ready = {.type = "Ready",
                          .status = "True",
                          .reason = "SecretReady",
                          .message = "credentials Secret created and read back from the cache",
                          .observed_generation = gen};
    int rc = kc_doc_set_string(m, "/status/phase", "Ready", NULL);
    if (rc == 0)
        rc = kc_doc_set_string(m, "/status/secretName", secret, NULL);
    if (rc == 0)
        rc = kc_doc_set_int(m, "/status/observedGeneration", gen, NULL);
    return rc ? rc : kc_doc_condition_set(m, &ready, NULL, NULL);
}

static kc_reconcile_result reconcile(void *ud, const kc_reconcile_request *req,
                                     kc_cached_client *cc)
{
    op *o = ud;
    kc_error err = KC_ERROR_INIT;
    kc_obj *mig = NULL, *secret_obj = NULL;
    kc_op_result sec_op = KC_OP_UNCHANGED, status_op = KC_OP_UNCHANGED;
    kc_reconcile_result res = {KC_RECONCILE_DONE, 0};
    char secret[300];
    int rc = kc_cached_client_get(cc, &migrations, req->ns, req->name, NULL, &mig, &err); /* 1 */
    if (rc == KC_ENOTFOUND || (rc == 0 && kc_obj_deleting(mig)))
        goto out; /* its Secret goes with it (ownerReference) */
    snprintf(secret, sizeof(secret), "%s-credentials", req->name);
    if (rc == 0) /* 2; block-on-write: returns once the cache holds the Secret */
        rc = kc_cached_client_create_or_update(cc, &secrets, "Secret", req->ns, secret,
                                               secret_mutate, mig, NULL, NULL, &sec_op, NULL, &err);
    if (sec_op == KC_OP_CREATED || sec_op == KC_OP_UPDATED) /* queued, never blocks */
        kc_event_recorder_record_obj(o->rec, mig, KC_EVENT_NORMAL,
                                     sec_op == KC_OP_CREATED ? "SecretCreated" : "SecretUpdated",
                                     "%s Secret %s", kc_op_result_name(sec_op), secret);
    if (rc == 0) /* 3: read it back from the cache */
        rc = kc_cached_client_get(cc, &secrets, req->ns, secret, NULL, &secret_obj, &err);
    if (rc == 0) /* 4: a status patch, or nothing when it is already so */
        rc = kc_cached_client_create_or_patch(cc, &migrations, "Migration", req->ns, req->name,
                                              status_mutate, secret, NULL, NULL, &status_op, NULL,
                                              &err);
    if (rc < 0) {
        report(req->key, rc, &err);
        if (mig) /* the message names the step's error, never the Secret's data */
            kc_event_recorder_record_obj(o->rec, mig, KC_EVENT_WARNING, "ReconcileFailed",
                                         "%s: %s (retrying)", kc_errno_name(rc),
                                         err.message ? err.message : kc_strerror(rc));
        res.code = KC_RECONCILE_ERROR; /* rate-limited retry */
    } else if (status_op != KC_OP_UNCHANGED) {
        kc_event_recorder_record_obj(o->rec, mig, KC_EVENT_NORMAL, "Ready",
                                     "Secret %s read back from the cache; status Ready at "
                                     "generation %lld",
                                     secret, (long long)kc_obj_generation(mig));
        printf("reconciled %s: Secret %s (rv %s), status Ready at generation %lld (%s)\n", req->key,
               secret, kc_obj_resource_version(secret_obj), (long long)kc_obj_generation(mig),
               kc_op_result_name(status_op));
        pthread_mutex_lock(&o->mu);
        o->ready++;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
    }
out:
    kc_obj_unref(secret_obj);
    kc_obj_unref(mig);
    kc_error_clear(&err);
    return res;
}

/* The CRD, and on a real cluster its Established condition (polled, bounded: an example). */
static int install_crd(kc_client *client, kc_error *err)
{
    int rc = kc_client_create(client, &crds, NULL, crd_json, strlen(crd_json), NULL, NULL, err);
    if (rc < 0 && rc != KC_EEXISTS)
        return rc;
    for (int i = 0; i < 300; i++) { /* up to 30 s */
        kc_obj *c = NULL;
        rc = kc_client_get(client, &crds, NULL, "migrations.example.kcache.io", &c, err);
        bool ok = rc == 0 && kc_obj_condition_is_true(c, "Established");
        kc_obj_unref(c);
        if (rc < 0 || ok)
            return rc;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return kc_error_set(err, KC_ETIMEOUT, "CRD migrations.example.kcache.io not Established");
}

static int create_samples(kc_client *client, const char *ns, int n, kc_error *err)
{
    for (int i = 0; i < n; i++) {
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"apiVersion\":\"example.kcache.io/v1\",\"kind\":\"Migration\",\"metadata\":"
                 "{\"name\":\"migration-%d\"},\"spec\":{\"source\":\"db-%d\"}}",
                 i, i);
        int rc = kc_client_create(client, &migrations, ns, body, strlen(body), NULL, NULL, err);
        if (rc < 0 && rc != KC_EEXISTS)
            return rc;
    }
    return 0;
}

static void print_status(kc_cached_client *cc, const char *ns, int n)
{
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof(name), "migration-%d", i);
        kc_obj *m = NULL;
        kc_doc *d = NULL; /* a copy to read from: strings borrowed from it, nothing to free */
        const char *phase = "-", *secret = "-";
        kc_condition ready = {0};
        if (kc_cached_client_get(cc, &migrations, ns, name, NULL, &m, NULL) == 0 &&
            kc_doc_from_obj(m, &d, NULL) == 0) {
            if (kc_doc_get_string(d, "/status/phase", &phase, NULL, NULL) < 0)
                phase = "-";
            if (kc_doc_get_string(d, "/status/secretName", &secret, NULL, NULL) < 0)
                secret = "-";
            if (kc_doc_condition_find(d, "Ready", &ready, NULL) < 0)
                ready = (kc_condition){.type = "Ready", .status = "-", .observed_generation = -1};
            printf("%s/%s: phase=%s secretName=%s condition %s=%s observedGeneration=%lld\n", ns,
                   name, phase, secret, ready.type, ready.status,
                   (long long)ready.observed_generation);
        }
        kc_doc_free(d);
        kc_obj_unref(m);
    }
}

/* Deliver the recorded Events (bounded) and print the recorder's counters. */
static void print_events(kc_event_recorder *rec)
{
    if (!rec)
        return;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_event_recorder_flush(rec, 30000, &err);
    if (rc < 0)
        report("events flush", rc, &err);
    kc_error_clear(&err);
    kc_event_recorder_stats st;
    kc_event_recorder_get_stats(rec, &st);
    printf("events: recorded=%llu created=%llu patched=%llu aggregated=%llu spam_filtered=%llu "
           "dropped=%llu errors=%llu\n",
           (unsigned long long)st.recorded, (unsigned long long)st.created,
           (unsigned long long)st.patched, (unsigned long long)st.aggregated,
           (unsigned long long)st.spam_filtered, (unsigned long long)st.dropped,
           (unsigned long long)st.errors);
}

static void delete_samples(kc_client *client, const char *ns, int n)
{
    for (int i = 0; i < n; i++) {
        char name[64], secret[96];
        snprintf(name, sizeof(name), "migration-%d", i);
        snprintf(secret, sizeof(secret), "%s-credentials", name);
        kc_client_delete(client, &migrations, ns, name, NULL, NULL, NULL);
        kc_client_delete(client, &secrets, ns, secret, NULL, NULL, NULL); /* no GC in-process */
    }
}

static int run(kc_client *client, const char *ns, int n)
{
    op o = {.ready = 0};
    pthread_mutex_init(&o.mu, NULL);
    pthread_cond_init(&o.cv, NULL);
    kc_controller *ctrl = NULL;
    kc_error err = KC_ERROR_INIT;
    /* Nested structs go by pointer and size (docs/abi.md). */
    kc_predicate generation = {.flags = KC_PREDICATE_GENERATION_CHANGED};
    kc_controller_type primary = {.gvr = migrations,
                                  .kind = "Migration",
                                  .predicate = &generation,
                                  .predicate_size = sizeof generation};
    kc_controller_opts opts = {
        .name = "migrations",
        .primary = &primary,
        .primary_size = sizeof primary,
        .reconcile = reconcile,
        .ud = &o,
        .max_concurrent_reconciles = 2,
        .sync_timeout_ms = 60000,
    };
    kc_controller_type owned = {.gvr = secrets};
    kc_event_recorder_opts eo = {.component = "migration-operator"};
    int rc = kc_event_recorder_new(client, &eo, &o.rec, &err);
    if (rc == 0)
        rc = install_crd(client, &err);
    if (rc == 0)
        rc = create_samples(client, ns, n, &err);
    if (rc == 0)
        rc = kc_controller_new(client, &opts, &ctrl, &err);
    if (rc == 0)
        rc = kc_controller_own(ctrl, &owned, &err);
    if (rc == 0) /* returns once the Migration and Secret caches have synced */
        rc = kc_controller_start(ctrl, &err);
    if (rc == 0) {
        printf("controller started: caches synced\n");
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += 60;
        pthread_mutex_lock(&o.mu);
        while (o.ready < n && pthread_cond_timedwait(&o.cv, &o.mu, &dl) == 0) {
        }
        int ready = o.ready;
        pthread_mutex_unlock(&o.mu);
        if (ready < n)
            rc = kc_error_set(&err, KC_ETIMEOUT, "%d of %d Migrations Ready after 60 s", ready, n);
        kc_controller_stats st;
        kc_controller_get_stats(ctrl, &st);
        printf("%d Migrations Ready; %llu reconciles (%llu errors)\n", ready,
               (unsigned long long)st.reconciles, (unsigned long long)st.errors);
        print_status(kc_controller_client(ctrl), ns, n);
    }
    if (rc < 0)
        report("run", rc, &err);
    kc_controller_free(ctrl); /* stops first: no more events are recorded */
    print_events(o.rec);
    kc_event_recorder_free(o.rec);
    delete_samples(client, ns, n);
    kc_error_clear(&err);
    pthread_cond_destroy(&o.cv);
    pthread_mutex_destroy(&o.mu);
    return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *kubeconfig = NULL, *ns = NULL;
    int n = 3;
    static const struct option lo[] = {{"kubeconfig", required_argument, NULL, 'k'},
                                       {"namespace", required_argument, NULL, 'n'},
                                       {"count", required_argument, NULL, 'c'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
    int ch;
    while ((ch = getopt_long(argc, argv, "n:h", lo, NULL)) != -1) {
        if (ch == 'k')
            kubeconfig = optarg;
        else if (ch == 'n')
            ns = optarg;
        else if (ch == 'c')
            n = atoi(optarg);
        else {
            printf("usage: migration_operator [--kubeconfig PATH] [-n NAMESPACE] [--count N]\n");
            return ch == 'h' ? 0 : 2;
        }
    }
    if (n < 1 || n > 1000) {
        fprintf(stderr, "migration_operator: --count must be 1..1000\n");
        return 2;
    }
    kc_server *srv = NULL;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc;
    if (kubeconfig) {
        kc_config_opts co = {.kubeconfig = kubeconfig};
        rc = kc_config_load(&co, &cfg, &err);
    } else {
        /* A nested struct is given by pointer and size (docs/abi.md). */
        kc_server_faults faults = {.watch_delay_min_ms = 10, .watch_delay_max_ms = 500};
        kc_server_opts so = {.listen = "127.0.0.1:0",
                             .quiet = true,
                             .faults = &faults,
                             .faults_size = sizeof faults};
        rc = kc_server_new(&so, &srv, &err);
        if (rc == 0)
            rc = kc_server_start(srv, &err);
        if (rc == 0)
            rc = kc_config_from_url(kc_server_url(srv), NULL, NULL, &cfg, &err);
    }
    if (rc == 0)
        rc = kc_client_new(cfg, NULL, &client, &err);
    int status = 1;
    if (rc < 0)
        report(kubeconfig ? kubeconfig : "embedded server", rc, &err);
    else
        status = run(client, ns ? ns : kc_config_namespace(cfg), n);
    kc_error_clear(&err);
    kc_client_free(client);
    kc_config_unref(cfg);
    kc_server_free(srv);
    return status;
}
