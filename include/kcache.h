/*
 * kcache.h — the whole public API. Include this, or the individual headers under kcache/.
 */
#ifndef KCACHE_H
#define KCACHE_H

#include "kcache/common.h"
#include "kcache/error.h"
#include "kcache/log.h"
#include "kcache/obj.h"
#include "kcache/doc.h"
#include "kcache/owner.h"
#include "kcache/condition.h"
#include "kcache/finalizer.h"
#include "kcache/rv.h"
#include "kcache/fence.h"
#include "kcache/decode.h"
#include "kcache/selector.h"
#include "kcache/shard.h"
#include "kcache/cancel.h"
#include "kcache/config.h"
#if __has_include("kcache/client.h")
#include "kcache/client.h"
#endif
#if __has_include("kcache/server.h")
#include "kcache/server.h"
#endif
#if __has_include("kcache/informer.h")
#include "kcache/informer.h"
#endif
#if __has_include("kcache/cache.h")
#include "kcache/cache.h"
#endif
#if __has_include("kcache/health.h")
#include "kcache/health.h"
#endif
#if __has_include("kcache/cached_client.h")
#include "kcache/cached_client.h"
#endif
#if __has_include("kcache/event.h")
#include "kcache/event.h"
#endif
#if __has_include("kcache/workqueue.h")
#include "kcache/workqueue.h"
#endif
#if __has_include("kcache/leader.h")
#include "kcache/leader.h"
#endif
#if __has_include("kcache/coordinator.h")
#include "kcache/coordinator.h"
#endif
#if __has_include("kcache/controller.h")
#include "kcache/controller.h"
#endif
#if __has_include("kcache/webhook.h")
#include "kcache/webhook.h"
#endif
#if __has_include("kcache/podmeta.h")
#include "kcache/podmeta.h"
#endif

#endif
