/*
 * seed.h — objects loaded at server start.
 * A fixtures directory of .yaml, .yml and .json files (multi-document YAML and List kinds allowed;
 * YAML converted to JSON with libyaml), and generated objects from a spec such as
 * "pods=100000,namespaces=100" or "pods=1000:ns=default,configmaps=50,persistentvolumes=1000"
 * (see `kcache serve --help`). Each object is handed to the callback as JSON text; the server
 * creates it through its normal create path (so defaults, uid and RV are assigned as usual).
 */
#ifndef KC_SERVER_SEED_H
#define KC_SERVER_SEED_H

#include "kcache/error.h"

/* Called once per object, in order. json is borrowed for the call. Return 0 to go on, or a
 * negative code to stop (returned by the loader). */
typedef int (*kc__seed_fn)(void *ud, const char *json, size_t len);

/* Load every fixture file of dir (sorted by name). Errors: KC_EIO, KC_EPARSE naming the file and
 * line, or the callback's code. */
int kc__seed_load_dir(const char *dir, kc__seed_fn fn, void *ud, kc_error *err);

/* Generate objects from spec. Errors: KC_EINVAL naming the bad part of spec. Namespaces that the
 * generated objects need are generated first (as Namespace objects). */
int kc__seed_generate(const char *spec, kc__seed_fn fn, void *ud, kc_error *err);

#endif
