/*
 * controllers.h — the controllers of the embedded API server (kc_server_opts.controllers):
 * namespace lifecycle, ownerReference garbage collector, ServiceAccount "default". The write path
 * calls them through srv->ctl (storage/storage.h); server.c installs them.
 */
#ifndef KC_SERVER_CONTROLLERS_H
#define KC_SERVER_CONTROLLERS_H

#include "server/storage/write.h"

/* The hooks for the controllers enabled in srv->opts.controllers, or NULL when none is. */
const kc__ctl_ops *kc__controllers_ops(const kc_server *srv);
/* Free what the controllers keep (the garbage collector's index); at server free. */
void kc__controllers_free(kc_server *srv);

#endif
