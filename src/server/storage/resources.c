/*
 * resources.c — the built-in resource table: every resource of a Kubernetes 1.34 API server's
 * discovery that can be stored without a controller, one row per resource, as data. A row names
 * the group, its versions (preferred first, all served from one store), plural, singular, kind,
 * short names, categories, scope, verbs and subresources as the real server's discovery lists
 * them, plus the storage rules the server applies (name rule, generation rule, extra field
 * selectors, whether delete returns the object, graceful deletion).
 *
 * Rows are in the real server's order: the core group first, then the groups in the order of its
 * /apis (its group priorities), each group's resources sorted by name, subresources sorted too,
 * so discovery lists them as a real server does. The review resources (authentication.k8s.io,
 * authorization.k8s.io) are rows flagged VIRT: create only, answered by the authz room, nothing
 * stored. Left out, because nothing stores them: bindings and componentstatuses; alpha and beta versions are off by default in a real server, and so here.
 * Subresources: status and scale are served; the others (pods/exec, …) are listed, as discovery
 * lists them, and answer 404.
 * Thread-safety: const data.
 */
#include "server/storage/storage_internal.h"

#include <string.h>

static const char *const pod_fields[] = {"spec.nodeName",
                                         "spec.restartPolicy",
                                         "spec.schedulerName",
                                         "spec.serviceAccountName",
                                         "spec.hostNetwork",
                                         "status.phase",
                                         "status.podIP",
                                         "status.nominatedNodeName",
                                         NULL};
static const char *const event_fields[] = {"involvedObject.kind",
                                           "involvedObject.namespace",
                                           "involvedObject.name",
                                           "involvedObject.uid",
                                           "involvedObject.apiVersion",
                                           "involvedObject.resourceVersion",
                                           "involvedObject.fieldPath",
                                           "reason",
                                           "source",
                                           "type",
                                           "reportingComponent",
                                           NULL};
static const char *const secret_fields[] = {"type", NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const node_fields[] = {"spec.unschedulable", NULL};
static const char *const job_fields[] = {"status.successful", NULL};

/* verbs */
#define ALL  "create,delete,deletecollection,get,list,patch,update,watch"
#define NODC "create,delete,get,list,patch,update,watch"
/* scope and storage flags */
#define NS    KC__BI_NAMESPACED
#define CL    0
#define RD    KC__BI_RETURN_DELETED
#define GRACE KC__BI_GRACEFUL
#define VIRT  KC__BI_VIRTUAL
/* name and generation rules */
#define SUB  KC__NAME_DNS1123_SUBDOMAIN
#define LBL  KC__NAME_DNS1123_LABEL
#define L1035 KC__NAME_DNS1035_LABEL
#define PATH KC__NAME_PATH_SEGMENT
#define G0   KC__GEN_NONE
#define GS   KC__GEN_SPEC
#define GA   KC__GEN_SPEC_ANNOT
#define GC   KC__GEN_CR

#define APIEXT "api-extensions"

/* clang-format off */
static const kc__builtin rows[] = {
/*   group versions plural singular kind shortNames categories verbs subresources flags name gen fields */
    {"", "v1", "configmaps", "configmap", "ConfigMap", "cm", NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"", "v1", "endpoints", "endpoints", "Endpoints", "ep", NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"", "v1", "events", "event", "Event", "ev", NULL, ALL, NULL, NS, SUB, G0, event_fields},
    {"", "v1", "limitranges", "limitrange", "LimitRange", "limits", NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"", "v1", "namespaces", "namespace", "Namespace", "ns", NULL, NODC, "finalize,status", CL, LBL, G0, ns_fields},
    {"", "v1", "nodes", "node", "Node", "no", NULL, ALL, "proxy,status", CL, SUB, G0, node_fields},
    {"", "v1", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", "pvc", NULL, ALL, "status", NS, SUB, G0, NULL},
    {"", "v1", "persistentvolumes", "persistentvolume", "PersistentVolume", "pv", NULL, ALL, "status", CL, SUB, G0, NULL},
    {"", "v1", "pods", "pod", "Pod", "po", "all", ALL, "attach,binding,ephemeralcontainers,eviction,exec,log,portforward,proxy,resize,status", NS | RD | GRACE, SUB, GS, pod_fields},
    {"", "v1", "podtemplates", "podtemplate", "PodTemplate", NULL, NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"", "v1", "replicationcontrollers", "replicationcontroller", "ReplicationController", "rc", "all", ALL, "scale,status", NS, SUB, GS, NULL},
    {"", "v1", "resourcequotas", "resourcequota", "ResourceQuota", "quota", NULL, ALL, "status", NS, SUB, G0, NULL},
    {"", "v1", "secrets", "secret", "Secret", NULL, NULL, ALL, NULL, NS, SUB, G0, secret_fields},
    {"", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", "sa", NULL, ALL, "token", NS | RD, SUB, G0, NULL},
    {"", "v1", "services", "service", "Service", "svc", "all", ALL, "proxy,status", NS, L1035, G0, NULL},
    {"apiregistration.k8s.io", "v1", "apiservices", "apiservice", "APIService", NULL, APIEXT, ALL, "status", CL, SUB, G0, NULL},
    {"apps", "v1", "controllerrevisions", "controllerrevision", "ControllerRevision", NULL, NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"apps", "v1", "daemonsets", "daemonset", "DaemonSet", "ds", "all", ALL, "status", NS, SUB, GS, NULL},
    {"apps", "v1", "deployments", "deployment", "Deployment", "deploy", "all", ALL, "scale,status", NS, SUB, GA, NULL},
    {"apps", "v1", "replicasets", "replicaset", "ReplicaSet", "rs", "all", ALL, "scale,status", NS, SUB, GS, NULL},
    {"apps", "v1", "statefulsets", "statefulset", "StatefulSet", "sts", "all", ALL, "scale,status", NS, LBL, GS, NULL},
    {"events.k8s.io", "v1", "events", "event", "Event", "ev", NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"authentication.k8s.io", "v1", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview", NULL, NULL, "create", NULL, CL | VIRT, SUB, G0, NULL},
    {"authentication.k8s.io", "v1", "tokenreviews", "tokenreview", "TokenReview", NULL, NULL, "create", NULL, CL | VIRT, SUB, G0, NULL},
    {"authorization.k8s.io", "v1", "localsubjectaccessreviews", "localsubjectaccessreview", "LocalSubjectAccessReview", NULL, NULL, "create", NULL, NS | VIRT, SUB, G0, NULL},
    {"authorization.k8s.io", "v1", "selfsubjectaccessreviews", "selfsubjectaccessreview", "SelfSubjectAccessReview", NULL, NULL, "create", NULL, CL | VIRT, SUB, G0, NULL},
    {"authorization.k8s.io", "v1", "selfsubjectrulesreviews", "selfsubjectrulesreview", "SelfSubjectRulesReview", NULL, NULL, "create", NULL, CL | VIRT, SUB, G0, NULL},
    {"authorization.k8s.io", "v1", "subjectaccessreviews", "subjectaccessreview", "SubjectAccessReview", NULL, NULL, "create", NULL, CL | VIRT, SUB, G0, NULL},
    {"autoscaling", "v2,v1", "horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler", "hpa", "all", ALL, "status", NS, SUB, GS, NULL},
    {"batch", "v1", "cronjobs", "cronjob", "CronJob", "cj", "all", ALL, "status", NS, SUB, GS, NULL},
    {"batch", "v1", "jobs", "job", "Job", NULL, "all", ALL, "status", NS, SUB, GS, job_fields},
    {"certificates.k8s.io", "v1", "certificatesigningrequests", "certificatesigningrequest", "CertificateSigningRequest", "csr", NULL, ALL, "approval,status", CL, SUB, G0, NULL},
    {"networking.k8s.io", "v1", "ingressclasses", "ingressclass", "IngressClass", NULL, NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"networking.k8s.io", "v1", "ingresses", "ingress", "Ingress", "ing", NULL, ALL, "status", NS, SUB, GS, NULL},
    {"networking.k8s.io", "v1", "ipaddresses", "ipaddress", "IPAddress", "ip", NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"networking.k8s.io", "v1", "networkpolicies", "networkpolicy", "NetworkPolicy", "netpol", NULL, ALL, NULL, NS, SUB, GS, NULL},
    {"networking.k8s.io", "v1", "servicecidrs", "servicecidr", "ServiceCIDR", NULL, NULL, ALL, "status", CL, SUB, G0, NULL},
    {"policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", "pdb", NULL, ALL, "status", NS, SUB, GS, NULL},
    {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", NULL, NULL, ALL, NULL, CL, PATH, G0, NULL},
    {"rbac.authorization.k8s.io", "v1", "clusterroles", "clusterrole", "ClusterRole", NULL, NULL, ALL, NULL, CL, PATH, G0, NULL},
    {"rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", NULL, NULL, ALL, NULL, NS, PATH, G0, NULL},
    {"rbac.authorization.k8s.io", "v1", "roles", "role", "Role", NULL, NULL, ALL, NULL, NS, PATH, G0, NULL},
    {"storage.k8s.io", "v1", "csidrivers", "csidriver", "CSIDriver", NULL, NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"storage.k8s.io", "v1", "csinodes", "csinode", "CSINode", NULL, NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"storage.k8s.io", "v1", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", NULL, NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"storage.k8s.io", "v1", "storageclasses", "storageclass", "StorageClass", "sc", NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"storage.k8s.io", "v1", "volumeattachments", "volumeattachment", "VolumeAttachment", NULL, NULL, ALL, "status", CL, SUB, G0, NULL},
    {"storage.k8s.io", "v1", "volumeattributesclasses", "volumeattributesclass", "VolumeAttributesClass", "vac", NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", "MutatingWebhookConfiguration", NULL, APIEXT, ALL, NULL, CL, SUB, GC, NULL},
    {"admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", "validatingadmissionpolicy", "ValidatingAdmissionPolicy", NULL, APIEXT, ALL, "status", CL, SUB, GS, NULL},
    {"admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", "validatingadmissionpolicybinding", "ValidatingAdmissionPolicyBinding", NULL, APIEXT, ALL, NULL, CL, SUB, GS, NULL},
    {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "validatingwebhookconfiguration", "ValidatingWebhookConfiguration", NULL, APIEXT, ALL, NULL, CL, SUB, GC, NULL},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "customresourcedefinition", "CustomResourceDefinition", "crd,crds", APIEXT, ALL, "status", CL, SUB, GS, NULL},
    {"scheduling.k8s.io", "v1", "priorityclasses", "priorityclass", "PriorityClass", "pc", NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"coordination.k8s.io", "v1", "leases", "lease", "Lease", NULL, NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"node.k8s.io", "v1", "runtimeclasses", "runtimeclass", "RuntimeClass", NULL, NULL, ALL, NULL, CL, SUB, G0, NULL},
    {"discovery.k8s.io", "v1", "endpointslices", "endpointslice", "EndpointSlice", NULL, NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "flowschema", "FlowSchema", NULL, NULL, ALL, "status", CL, SUB, GS, NULL},
    {"flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "prioritylevelconfiguration", "PriorityLevelConfiguration", NULL, NULL, ALL, "status", CL, SUB, GS, NULL},
    {"resource.k8s.io", "v1", "deviceclasses", "deviceclass", "DeviceClass", NULL, NULL, ALL, NULL, CL, SUB, GS, NULL},
    {"resource.k8s.io", "v1", "resourceclaims", "resourceclaim", "ResourceClaim", NULL, NULL, ALL, "status", NS, SUB, G0, NULL},
    {"resource.k8s.io", "v1", "resourceclaimtemplates", "resourceclaimtemplate", "ResourceClaimTemplate", NULL, NULL, ALL, NULL, NS, SUB, G0, NULL},
    {"resource.k8s.io", "v1", "resourceslices", "resourceslice", "ResourceSlice", NULL, NULL, ALL, NULL, CL, SUB, G0, NULL},
};

/* Subresources other than status (the parent's kind; get, patch, update): their kind, the
 * group/version of that kind when not the parent's, and verbs. proxy's kind is per parent. */
static const kc__subresource subs[] = {
    {"approval", NULL, NULL, NULL, NULL, "get,patch,update"},
    {"attach", NULL, "PodAttachOptions", NULL, NULL, "create,get"},
    {"binding", NULL, "Binding", NULL, NULL, "create"},
    {"ephemeralcontainers", NULL, NULL, NULL, NULL, "get,patch,update"},
    {"eviction", NULL, "Eviction", "policy", "v1", "create"},
    {"exec", NULL, "PodExecOptions", NULL, NULL, "create,get"},
    {"finalize", NULL, NULL, NULL, NULL, "update"},
    {"log", NULL, NULL, NULL, NULL, "get"},
    {"portforward", NULL, "PodPortForwardOptions", NULL, NULL, "create,get"},
    {"proxy", "nodes", "NodeProxyOptions", NULL, NULL, "create,delete,get,patch,update"},
    {"proxy", "pods", "PodProxyOptions", NULL, NULL, "create,delete,get,patch,update"},
    {"proxy", "services", "ServiceProxyOptions", NULL, NULL, "create,delete,get,patch,update"},
    {"resize", NULL, NULL, NULL, NULL, "get,patch,update"},
    {"scale", NULL, "Scale", "autoscaling", "v1", "get,patch,update"},
    {"status", NULL, NULL, NULL, NULL, "get,patch,update"},
    {"token", NULL, "TokenRequest", "authentication.k8s.io", "v1", "create"},
};
/* clang-format on */

const kc__builtin *kc__builtins(size_t *ret_n)
{
    *ret_n = KC__ARRAY_LEN(rows);
    return rows;
}

const kc__subresource *kc__subresource_find(const char *plural, const char *name)
{
    for (size_t i = 0; i < KC__ARRAY_LEN(subs); i++)
        if (!strcmp(subs[i].name, name) && (!subs[i].parent || !strcmp(subs[i].parent, plural)))
            return &subs[i];
    return NULL;
}
