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
    kc__column cols[12];
    size_t ncols;
    kc__row_fn row;
    size_t nwide; /* the last nwide columns have priority 1: shown by kubectl -o wide only */
} kc__printer;

/* The order of a list's rows under printer p: upstream sorts FlowSchemas (by matching
 * precedence, then name); NULL keeps the stored order (table_cluster.c). */
typedef int (*kc__row_cmp)(const kc_obj *a, const kc_obj *b);
kc__row_cmp kc__table_row_cmp(const kc__printer *p);

#define COL_NAME                                                                                   \
    {                                                                                              \
        "Name", "string", "name",                                                                  \
            "Name must be unique within a namespace. Is required when creating resources, "        \
            "although "                                                                            \
            "some resources may allow a client to request the generation of an appropriate name "  \
            "automatically. Name is primarily intended for creation idempotence and "              \
            "configuration "                                                                       \
            "definition. Cannot be updated. More info: "                                           \
            "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"        \
    }
#define COL_AGE                                                                                    \
    {                                                                                              \
        "Age", "string", "",                                                                       \
            "CreationTimestamp is a timestamp representing the server time when this object was "  \
            "created."                                                                             \
    }

#define COL_CONTAINERS                                                                             \
    {                                                                                              \
        "Containers", "string", "", "Names of each container in the template."                     \
    }
#define COL_IMAGES                                                                                 \
    {                                                                                              \
        "Images", "string", "", "Images referenced by each container in the template."             \
    }

/* The number of elements of the array, or members of the object, at ptr (0 when absent). */
json_int_t kc__table_count(const kc_obj *o, const char *ptr);
/* Age: the humanised time since metadata.creationTimestamp ("<unknown>" without one). */
json_t *kc__table_age(const kc_obj *o, int64_t now);
/* The string at JSON pointer ptr as a jansson string (new reference), dflt when absent or not a
 * string; the integer at ptr, 0 when absent (table_printers.c). */
json_t *kc__table_str(const kc_obj *o, const char *ptr, const char *dflt);
int64_t kc__table_int(const kc_obj *o, const char *ptr);
/* Seconds since the epoch of the RFC 3339 string at ptr; -1 when absent or unparsable. */
int64_t kc__table_time(const kc_obj *o, const char *ptr);
/* The rows of a core/v1 and an events.k8s.io/v1 Event, and their printers (table_event.c). */
json_t *kc__table_row_event(const kc_obj *o, int64_t now);
json_t *kc__table_row_event_v1(const kc_obj *o, int64_t now);
extern const kc__printer kc__printers_event[2];
/* batch/v1 jobs and cronjobs (table_batch.c). */
extern const kc__printer kc__printer_job, kc__printer_cronjob;
/* serviceaccounts, role/clusterrole bindings, leases, ingresses, networkpolicies,
 * priorityclasses, poddisruptionbudgets, endpoints, controllerrevisions (table_more.c). */
extern const kc__printer kc__printers_more[];
extern const size_t kc__printers_more_len;
/* persistentvolumeclaims, persistentvolumes, storageclasses (table_storage.c). */
extern const kc__printer kc__printers_storage[];
extern const size_t kc__printers_storage_len;
/* replicationcontrollers, podtemplates, resourcequotas, certificatesigningrequests,
 * endpointslices, ingressclasses, runtimeclasses, servicecidrs, ipaddresses, apiservices
 * (table_extra.c). */
extern const kc__printer kc__printers_extra[];
extern const size_t kc__printers_extra_len;
/* webhook configurations, validating admission policies and bindings, flowschemas, priority
 * level configurations, csidrivers, csinodes, volumeattachments, volumeattributesclasses,
 * resource.k8s.io kinds (table_cluster.c). */
extern const kc__printer kc__printers_cluster[];
extern const size_t kc__printers_cluster_len;
/* horizontalpodautoscalers, autoscaling v2 and v1 (table_hpa.c). */
extern const kc__printer kc__printer_hpa;
/* The canonical resource.Quantity String() of v (a quantity string or JSON number) into out;
 * absent when v is NULL or null, v's own text when it does not parse (table_extra.c). */
void kc__table_quantity(const json_t *v, const char *absent, char *out, size_t cap);
/* strcmp over two const char * elements, for qsort (table_extra.c). */
int kc__table_cmp_str(const void *a, const void *b);

/* The column set for a resource (group "" = core): kubectl's defaults for known built-ins,
 * Name/Age for custom resources, Name/Created At otherwise. Borrowed (static). */
const kc__printer *kc__table_printer(const char *group, const char *resource);

/* The Table's head {kind, apiVersion, metadata{resourceVersion, continue}} (rv/cont may be NULL),
 * and a row's object (PartialObjectMetadata of o); new references, NULL on ENOMEM (table.c). */
json_t *kc__table_skeleton(const char *rv, const char *cont);
json_t *kc__table_row_object(const kc_obj *o);

/* The priority of column i of p: 0 shown by default, 1 only with -o wide (kubectl filters). */
int kc__table_column_priority(const kc__printer *p, size_t i);

/* The sub-tree of o at JSON pointer ptr decoded with jansson (new reference), NULL when absent
 * or on ENOMEM (table_wide.c). */
json_t *kc__table_json(const kc_obj *o, const char *ptr);

/* The priority-1 cells kubectl shows with -o wide (table_wide.c), appended to row: */
/* Containers and Images of the containers array at ptr (names, images: comma-joined). */
void kc__wide_containers(const kc_obj *o, const char *ptr, json_t *row);
/* Selector: the metav1.LabelSelector at ptr as metav1.FormatLabelSelector writes it
 * ("a=b,k in (x,y),!gone"; "<none>" when empty). */
void kc__wide_label_selector(const kc_obj *o, const char *ptr, json_t *row);
/* Selector: the string map at ptr as labels.FormatLabels ("a=b,c=d" by key; "<none>"). */
void kc__wide_selector_map(const kc_obj *o, const char *ptr, json_t *row);
/* Pods: IP, Node, Nominated Node, Readiness Gates. */
void kc__wide_pod(const kc_obj *o, json_t *row);
/* Nodes: Internal-IP, External-IP, OS-Image, Kernel-Version, Container-Runtime. */
void kc__wide_node(const kc_obj *o, json_t *row);

#endif
