/*
 * version.h — the one statement of the Kubernetes version the embedded API server serves: its
 * built-in resources, schemas (models.c, generated from that release's OpenAPI) and defaults.
 * GET /version (http.c: gitVersion "v1.34.0-kcache.<library version>", what `kubectl version`
 * prints), the OpenAPI documents' info.version (discovery/openapi.c) and the docs (docs/serve.md)
 * all state this one; tests/conformance/run_kubectl.sh checks that they agree.
 */
#ifndef KC_SERVER_VERSION_H
#define KC_SERVER_VERSION_H

#define KC__KUBE_MAJOR "1"
#define KC__KUBE_MINOR "34"
#define KC__KUBE_PATCH "0"
/* "v1.34.0" */
#define KC__KUBE_VERSION "v" KC__KUBE_MAJOR "." KC__KUBE_MINOR "." KC__KUBE_PATCH

#endif
