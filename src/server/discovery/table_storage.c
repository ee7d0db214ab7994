/*
 * table_storage.c — kubectl's printers of the storage kinds for the Table renderer, as upstream's
 * printers.go writes them: PersistentVolumeClaims Name, Status (phase; Terminating while
 * deleting), Volume, Capacity and Access Modes (once bound to a volume: status.capacity.storage,
 * "RWO,ROX,RWX,RWOP"), StorageClass (the beta annotation, else spec.storageClassName),
 * VolumeAttributesClass (<unset>), Age, and VolumeMode with -o wide; PersistentVolumes Name,
 * Capacity, Access Modes, Reclaim Policy, Status, Claim ("namespace/name"), StorageClass,
 * VolumeAttributesClass, Reason, Age, VolumeMode (-o wide); StorageClasses Name (" (default)"
 * for the default class), Provisioner, ReclaimPolicy (Delete), VolumeBindingMode (Immediate),
 * AllowVolumeExpansion (false), Age. Thread-safe: pure functions over const tables.
 */
#include "server/discovery/table_internal.h"

#include "core/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* helper.GetAccessModesAsString: the modes present, in this order, comma-joined. */
static json_t *access_modes(const kc_obj *o, const char *ptr)
{
    static const char *const modes[][2] = {{"ReadWriteOnce", "RWO"},
                                           {"ReadOnlyMany", "ROX"},
                                           {"ReadWriteMany", "RWX"},
                                           {"ReadWriteOncePod", "RWOP"}};
    json_t *have = kc__table_json(o, ptr);
    char out[32] = "";
    for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
        size_t i;
        json_t *v;
        json_array_foreach(have, i, v)
        {
            if (kc__streq(json_string_value(v), modes[m][0])) {
                if (out[0])
                    strcat(out, ",");
                strcat(out, modes[m][1]);
                break;
            }
        }
    }
    json_decref(have);
    return json_string(out);
}

/* The beta storage-class annotation when set, else spec.storageClassName ("" when neither). */
static json_t *storage_class(const kc_obj *o)
{
    json_t *a =
        kc__table_str(o, "/metadata/annotations/volume.beta.kubernetes.io~1storage-class", NULL);
    return a ? a : kc__table_str(o, "/spec/storageClassName", "");
}

static json_t *phase(const kc_obj *o)
{
    return kc_obj_deleting(o) ? json_string("Terminating") : kc__table_str(o, "/status/phase", "");
}

static json_t *vac(const kc_obj *o)
{
    json_t *v = kc__table_str(o, "/spec/volumeAttributesClassName", "");
    if (!json_string_length(v)) {
        json_decref(v);
        v = json_string("<unset>");
    }
    return v;
}

static json_t *row_pvc(const kc_obj *o, int64_t now)
{
    json_t *volume = kc__table_str(o, "/spec/volumeName", "");
    bool bound = json_string_length(volume) > 0;
    return json_pack("[s,o,o,o,o,o,o,o,o]", kc_obj_name(o), phase(o), volume,
                     bound ? kc__table_str(o, "/status/capacity/storage", "") : json_string(""),
                     bound ? access_modes(o, "/status/accessModes") : json_string(""),
                     storage_class(o), vac(o), kc__table_age(o, now),
                     kc__table_str(o, "/spec/volumeMode", "<unset>"));
}

static json_t *row_pv(const kc_obj *o, int64_t now)
{
    char claim[600] = "";
    json_t *ref = kc__table_json(o, "/spec/claimRef");
    if (json_is_object(ref))
        snprintf(claim, sizeof claim, "%s/%s",
                 json_string_value(json_object_get(ref, "namespace")) ?: "",
                 json_string_value(json_object_get(ref, "name")) ?: "");
    json_decref(ref);
    return json_pack("[s,o,o,o,o,s,o,o,o,o,o]", kc_obj_name(o),
                     kc__table_str(o, "/spec/capacity/storage", ""),
                     access_modes(o, "/spec/accessModes"),
                     kc__table_str(o, "/spec/persistentVolumeReclaimPolicy", ""), phase(o), claim,
                     storage_class(o), vac(o), kc__table_str(o, "/status/reason", ""),
                     kc__table_age(o, now), kc__table_str(o, "/spec/volumeMode", "<unset>"));
}

static bool annotation_true(const kc_obj *o, const char *ptr)
{
    json_t *v = kc__table_str(o, ptr, "");
    bool t = kc__streq(json_string_value(v), "true");
    json_decref(v);
    return t;
}

static json_t *row_storageclass(const kc_obj *o, int64_t now)
{
    char name[300];
    bool dflt =
        annotation_true(o, "/metadata/annotations/storageclass.kubernetes.io~1is-default-class") ||
        annotation_true(o,
                        "/metadata/annotations/storageclass.beta.kubernetes.io~1is-default-class");
    snprintf(name, sizeof name, "%s%s", kc_obj_name(o), dflt ? " (default)" : "");
    bool expand = false;
    kc_obj_get_bool(o, "/allowVolumeExpansion", &expand, NULL);
    return json_pack("[s,o,o,o,b,o]", name, kc__table_str(o, "/provisioner", ""),
                     kc__table_str(o, "/reclaimPolicy", "Delete"),
                     kc__table_str(o, "/volumeBindingMode", "Immediate"), expand,
                     kc__table_age(o, now));
}

#define COL_VAC(what)                                                                              \
    {                                                                                              \
        "VolumeAttributesClass", "string", "", "VolumeAttributesClass of the " what                \
    }
#define COL_VOLUME_MODE                                                                            \
    {                                                                                              \
        "VolumeMode", "string", "",                                                                \
            "volumeMode defines what type of volume is required by the claim. Value of "           \
            "Filesystem is "                                                                       \
            "implied when not included in claim spec."                                             \
    }

const kc__printer kc__printers_storage[] = {
    {"",
     "persistentvolumeclaims",
     {COL_NAME,
      {"Status", "string", "", "phase represents the current phase of PersistentVolumeClaim."},
      {"Volume", "string", "",
       "volumeName is the binding reference to the PersistentVolume backing this claim."},
      {"Capacity", "string", "",
       "capacity represents the actual resources of the underlying volume."},
      {"Access Modes", "string", "",
       "accessModes contains the actual access modes the volume backing the PVC has."},
      {"StorageClass", "string", "", "StorageClass of the pvc"},
      COL_VAC("pvc"),
      COL_AGE,
      COL_VOLUME_MODE},
     9,
     row_pvc,
     1},
    {"",
     "persistentvolumes",
     {COL_NAME,
      {"Capacity", "string", "",
       "capacity is the description of the persistent volume's resources "
       "and capacity."},
      {"Access Modes", "string", "", "accessModes contains all ways the volume can be mounted."},
      {"Reclaim Policy", "string", "",
       "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released "
       "from its claim."},
      {"Status", "string", "",
       "phase indicates if a volume is available, bound to a claim, or "
       "released by a claim."},
      {"Claim", "string", "",
       "claimRef is part of a bi-directional binding between "
       "PersistentVolume and PersistentVolumeClaim."},
      {"StorageClass", "string", "", "StorageClass of the pv"},
      COL_VAC("pv"),
      {"Reason", "string", "", "reason is a brief CamelCase string that describes any failure."},
      COL_AGE,
      COL_VOLUME_MODE},
     11,
     row_pv,
     1},
    {"storage.k8s.io",
     "storageclasses",
     {COL_NAME,
      {"Provisioner", "string", "", "provisioner indicates the type of the provisioner."},
      {"ReclaimPolicy", "string", "",
       "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes."},
      {"VolumeBindingMode", "string", "",
       "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."},
      {"AllowVolumeExpansion", "string", "",
       "allowVolumeExpansion shows whether the storage class allow volume expand."},
      COL_AGE},
     6,
     row_storageclass,
     0},
};
const size_t kc__printers_storage_len =
    sizeof(kc__printers_storage) / sizeof(kc__printers_storage[0]);
