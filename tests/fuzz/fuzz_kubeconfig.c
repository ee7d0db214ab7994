/*
 * fuzz_kubeconfig.c — libFuzzer target for the kubeconfig reader: the input is one kubeconfig
 * file. It goes through the bounded YAML tree builder (kc__yaml_parse) and then through the
 * whole loader (kc_config_load on a memfd), which must either build a config or fail with
 * KC_ECONFIG / KC_EUNSUPPORTED / KC_EIO — never crash, leak or hang. Seed corpus:
 * tests/fuzz/corpus/kubeconfig/.
 */
#include "http/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kc__ynode *root = NULL;
    if (kc__yaml_parse((const char *)data, size, &root, NULL) == 0)
        kc__ynode_free(root);

    int fd = memfd_create("kubeconfig", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        kc_config_opts o = {.kubeconfig = path};
        kc_config *cfg = NULL;
        kc_error err = KC_ERROR_INIT;
        int rc = kc_config_load(&o, &cfg, &err);
        if (rc == 0) {
            if (!kc_config_server(cfg) || !kc_config_namespace(cfg))
                abort();
            kc_config_unref(cfg);
        } else if (rc != KC_ECONFIG && rc != KC_EUNSUPPORTED && rc != KC_EIO && rc != KC_ENOMEM) {
            abort();
        }
        kc_error_clear(&err);
    }
    close(fd);
    return 0;
}
