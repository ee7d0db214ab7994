/*
 * configmap_mirror.c — ConfigMaps labelled mirror=true are mirrored into Secrets "<name>-mirror"
 * they control: data base64-encoded, kept in step, a hand edit undone. A Secret of that name the
 * ConfigMap does not control is left alone. Unlabelling or deleting the ConfigMap deletes its
 * mirror (finalizer mirror.kcache.io/cleanup). Usage: configmap_mirror [KUBECONFIG]; SIGTERM stops.
 */
#include <kcache.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kc_gvr cms = {"", "v1", "configmaps"}, secrets = {"", "v1", "secrets"};
static const kc_reconcile_result done = {KC_RECONCILE_DONE, 0}, failed = {KC_RECONCILE_ERROR, 0};

static int mirror(void *cm, kc_doc *s, const kc_obj *old)
{
    kc_obj_iter *it = NULL;
    if (old && !kc_obj_is_controlled_by(old, cm))
        return KC_EEXISTS; /* someone else's Secret: leave it alone */
    int rc = kc_doc_set_raw(s, "/data", "{}", 2, NULL);
    if (rc == 0 && (rc = kc_obj_iter_new(cm, "/data", &it, NULL)) == KC_ENOTFOUND)
        rc = 0;
    while (rc == 0 && it && kc_obj_iter_next(it) == 1) {
        char ptr[512] = "/data/", *b64 = NULL;
        size_t kn, vn;
        const char *v, *k = kc_obj_iter_key(it, &kn);
        kc_json_pointer_escape(k, kn, ptr + 6, sizeof ptr - 6);
        if ((rc = kc_obj_iter_string(it, &v, &vn)) == 0 &&
            (rc = kc_base64_encode(v, vn, &b64, NULL, NULL)) == 0)
            rc = kc_doc_set_string(s, ptr, b64, NULL);
        free(b64);
    }
    kc_obj_iter_free(it);
    return rc ? rc : kc_doc_set_controller_reference(s, cm, NULL);
}

static kc_reconcile_result reconcile(void *ud, const kc_reconcile_request *r, kc_cached_client *cc)
{
    kc_obj *cm = NULL;
    char name[300];
    int rc = kc_cached_client_get(cc, &cms, r->ns, r->name, NULL, &cm, NULL);
    const char *on = rc == 0 ? kc_obj_label(cm, "mirror") : NULL;
    snprintf(name, sizeof name, "%s-mirror", r->name);
    if (on && strcmp(on, "true") == 0)
        rc = kc_cached_client_create_or_update(cc, &secrets, "Secret", r->ns, name, mirror, cm,
                                               NULL, NULL, NULL, NULL, NULL);
    kc_obj_unref(cm);
    return rc == 0 || rc == KC_ENOTFOUND || rc == KC_EEXISTS ? done : failed;
}

static kc_reconcile_result cleanup(void *ud, const kc_reconcile_request *r, kc_obj *cm,
                                   kc_cached_client *cc)
{
    kc_obj *s = NULL;
    char name[300];
    snprintf(name, sizeof name, "%s-mirror", r->name);
    int rc = kc_cached_client_get(cc, &secrets, r->ns, name, NULL, &s, NULL);
    if (rc == 0 && kc_obj_is_controlled_by(s, cm))
        rc = kc_cached_client_delete(cc, &secrets, r->ns, name, NULL, NULL, NULL, NULL);
    kc_obj_unref(s);
    return rc == 0 || rc == KC_ENOTFOUND ? done : failed;
}

int main(int argc, char **argv)
{
    kc_error err = KC_ERROR_INIT;
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_controller *ctrl = NULL;
    kc_controller_type cm = {.gvr = cms, .kind = "ConfigMap"},
                       sec = {.gvr = secrets, .kind = "Secret"};
    kc_controller_opts o = {.primary = &cm, .primary_size = sizeof cm, .reconcile = reconcile};
    kc_finalizer_opts f = {"mirror.kcache.io/cleanup", cleanup, NULL, "mirror=true"};
    kc_config_opts co = {.kubeconfig = argc > 1 ? argv[1] : NULL};
    sigset_t sigs;
    int sig, rc = kc_config_load(&co, &cfg, &err);
    sigemptyset(&sigs), sigaddset(&sigs, SIGINT), sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before any thread starts: sigwait takes them */
    if (rc == 0 && (rc = kc_client_new(cfg, NULL, &client, &err)) == 0 &&
        (rc = kc_controller_new(client, &o, &ctrl, &err)) == 0 &&
        (rc = kc_controller_own(ctrl, &sec, &err)) == 0 &&
        (rc = kc_controller_add_finalizer(ctrl, &f, &err)) == 0 &&
        (rc = kc_controller_start(ctrl, &err)) == 0)
        printf("configmap_mirror: running\n"), fflush(stdout), sigwait(&sigs, &sig);
    if (rc < 0)
        fprintf(stderr, "configmap_mirror: %s\n", err.message ? err.message : kc_strerror(rc));
    kc_controller_free(ctrl), kc_client_free(client), kc_config_unref(cfg), kc_error_clear(&err);
    return rc < 0;
}
