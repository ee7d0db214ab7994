/*
 * log_enricher.c — the library side of a node log agent (kcache/podmeta.h, docs/node-agents.md):
 * reads "<namespace> <pod> <container>" or CRI log file names (/var/log/containers/<pod>_<ns>_
 * <container>-<64-hex id>.log) on stdin, prints each as JSON enriched with the pod's uid, labels,
 * image, container id and whether it is deleted (a tombstone). One poll() loop over stdin and the
 * cache's fd. Usage: log_enricher KUBECONFIG [NODE] (NODE default $NODE_NAME).
 */
#include <kcache/doc.h>
#include <kcache/podmeta.h>

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Split a line into ns, pod, container and (CRI file names) the container id. */
static int parse(char *line, char **ns, char **pod, char **cont, char **id)
{
    char *base = strrchr(line, '/') ? strrchr(line, '/') + 1 : line;
    size_t n = strlen(base);
    if (n > 69 && strcmp(base + n - 4, ".log") == 0 && base[n - 69] == '-') { /* CRI name */
        base[n - 4] = base[n - 69] = '\0';
        *id = base + n - 68;
        *pod = strtok(base, "_"), *ns = strtok(NULL, "_"), *cont = strtok(NULL, "");
    } else {
        *id = NULL;
        *ns = strtok(line, " \t"), *pod = strtok(NULL, " \t"), *cont = strtok(NULL, " \t");
    }
    return *ns && *pod && *cont ? 0 : -1;
}

/* One line: look the pod up (waits up to 100 ms for one not yet seen), print its JSON. */
static int enrich(kc_podmeta *pm, char *line)
{
    char *ns, *pod, *cont, *id;
    if (parse(line, &ns, &pod, &cont, &id)) {
        fprintf(stderr, "log_enricher: cannot parse a line\n");
        return 0;
    }
    kc_podmeta_query q = {.ns = ns, .name = pod, .container_id = id};
    kc_podmeta_result r;
    kc_error err = KC_ERROR_INIT;
    kc_doc *out = NULL;
    int rc = kc_doc_new(&out, &err);
    if (rc == 0)
        rc = kc_doc_set_string(out, "/namespace", ns, &err);
    if (rc == 0)
        rc = kc_doc_set_string(out, "/pod", pod, &err);
    if (rc == 0)
        rc = kc_doc_set_string(out, "/container", cont, &err);
    int found = rc == 0 ? kc_podmeta_lookup(pm, &q, &r, &err) : rc;
    if (found == 0) {
        int i = r.container >= 0 ? r.container : kc_podmeta_pod_find_container(r.pod, cont, NULL);
        kc_podmeta_container c = {"", "", "", "", "", KC_PODMETA_CONTAINER};
        if (i >= 0)
            rc = kc_podmeta_pod_container(r.pod, (size_t)i, &c);
        const char *uid = kc_podmeta_pod_get(r.pod, KC_PODMETA_FIELD_UID, NULL);
        rc = rc ? rc : kc_doc_set_string(out, "/pod_uid", uid, &err);
        rc = rc ? rc : kc_doc_set_raw(out, "/labels", "{}", 2, &err);
        for (size_t l = 0; rc == 0 && l < kc_podmeta_pod_map_count(r.pod, KC_PODMETA_LABELS); l++) {
            const char *k = "", *v = "";
            char ptr[700] = "/labels/"; /* a key is at most 317 bytes, escaped at most twice */
            kc_podmeta_pod_map_at(r.pod, KC_PODMETA_LABELS, l, &k, &v, NULL);
            kc_json_pointer_escape(k, strlen(k), ptr + 8, sizeof ptr - 8);
            rc = kc_doc_set_string(out, ptr, v, &err);
        }
        rc = rc ? rc : kc_doc_set_string(out, "/image", c.image, &err);
        rc = rc ? rc : kc_doc_set_string(out, "/container_id", c.container_id, &err);
        if (rc == 0)
            rc = kc_doc_set_bool(out, "/deleted", kc_podmeta_pod_deleted(r.pod), &err);
        kc_podmeta_result_clear(&r);
    } else if (found == KC_ENOTFOUND) { /* file-derived fields only (DP3) */
        kc_error_clear(&err);
        rc = kc_doc_set_bool(out, "/unknown_pod", true, &err);
    } else {
        rc = found;
    }
    char *json = NULL;
    if (rc == 0)
        rc = kc_doc_json(out, &json, NULL, &err);
    if (rc == 0 && printf("%s\n", json) > 0)
        fflush(stdout);
    else if (rc)
        fprintf(stderr, "log_enricher: %s: %s\n", kc_errno_name(rc),
                err.message ? err.message : kc_strerror(rc));
    free(json);
    kc_doc_free(out);
    kc_error_clear(&err);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: log_enricher KUBECONFIG [NODE]\n");
        return 2;
    }
    kc_config_opts co = {.kubeconfig = argv[1]};
    kc_podmeta_opts po = {.node_name = argc > 2 ? argv[2] : NULL};
    kc_config *cfg = NULL;
    kc_client *client = NULL;
    kc_podmeta *pm = NULL;
    kc_error err = KC_ERROR_INIT;
    int rc = kc_config_load(&co, &cfg, &err);
    if (rc == 0)
        rc = kc_client_new(cfg, NULL, &client, &err);
    if (rc == 0)
        rc = kc_podmeta_new(client, &po, &pm, &err);
    if (rc == 0)
        rc = kc_podmeta_start(pm, &err);
    if (rc == 0 && (rc = kc_podmeta_wait_ready(pm, 30000, &err)) == 0) /* or buffer records */
        fprintf(stderr, "log_enricher: ready\n");
    char buf[8192];
    size_t len = 0;
    bool eof = false;
    while (rc == 0 && !eof) {
        struct pollfd fds[2] = {{0, POLLIN, 0}, {kc_podmeta_fd(pm), POLLIN, 0}};
        if (poll(fds, 2, -1) < 0)
            continue;                /* EINTR */
        if (fds[1].revents & POLLIN) /* the cache changed: an agent could flush held records */
            kc_podmeta_fd_drain(pm);
        if (!(fds[0].revents & (POLLIN | POLLHUP)))
            continue;
        ssize_t n = read(0, buf + len, sizeof buf - 1 - len);
        eof = n <= 0;
        len += n > 0 ? (size_t)n : 0;
        buf[len] = '\0';
        char *start = buf, *nl;
        while (rc == 0 && ((nl = strchr(start, '\n')) || (eof && *start))) {
            if (nl)
                *nl = '\0';
            rc = enrich(pm, start);
            start = nl ? nl + 1 : start + strlen(start);
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
        if (len == sizeof buf - 1)
            len = 0; /* a line longer than the buffer: dropped */
    }
    if (rc != 0)
        fprintf(stderr, "log_enricher: %s: %s\n", kc_errno_name(rc),
                err.message ? err.message : kc_strerror(rc));
    kc_error_clear(&err);
    kc_podmeta_free(pm);
    kc_client_free(client);
    kc_config_unref(cfg);
    return rc == 0 ? 0 : 1;
}
