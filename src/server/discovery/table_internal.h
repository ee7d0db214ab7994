/*
 * table_internal.h — column sets of the Table renderer: table.c builds the documents,
 * table_printers.c knows the columns and computes the cells. Thread-safe: const data.
 */
#ifndef KC_SERVER_TABLE_INTERNAL_H
#define KC_SERVER_TABLE_INTERNAL_H

#include "server/discovery/table.h"

typedef struct kc__column {
    const char *name, *type, *format, *description;
} kc__column;

typedef json_t *(*kc__row_fn)(const kc_obj *o, int64_t now);

typedef struct kc__printer {
    const char *group, *resource;
    kc__column cols[10];
    size_t ncols;
    kc__row_fn row;
} kc__printer;

/* The column set for a resource (group "" = core): kubectl's defaults for known built-ins,
 * Name/Age for custom resources, Name/Created At otherwise. Borrowed (static). */
const kc__printer *kc__table_printer(const char *group, const char *resource);

/* The Table's head {kind, apiVersion, metadata{resourceVersion, continue}} (rv/cont may be NULL),
 * and a row's object (PartialObjectMetadata of o); new references, NULL on ENOMEM (table.c). */
json_t *kc__table_skeleton(const char *rv, const char *cont);
json_t *kc__table_row_object(const kc_obj *o);

/* The priority of column i of p: 0 shown by default, 1 only with -o wide (kubectl filters). */
int kc__table_column_priority(const kc__printer *p, size_t i);

#endif
