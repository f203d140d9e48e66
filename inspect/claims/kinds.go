package claims

// scope says whether objects of a kind live in a namespace or across the
// whole cluster.
type scope int

const (
	namespaced scope = iota + 1
	clusterWide
)

// builtin is the scope of every kind a Kubernetes API server serves
// without a CRD, by API group and kind ("" is the core group). A kind
// outside this table and outside the package's own CRDs has a scope only
// the cluster knows; it is reported as unknown, never guessed.
var builtin = map[string]map[string]scope{
	"": {
		"Namespace": clusterWide, "Node": clusterWide, "PersistentVolume": clusterWide, "ComponentStatus": clusterWide,
		"Pod": namespaced, "Service": namespaced, "ConfigMap": namespaced, "Secret": namespaced, "ServiceAccount": namespaced,
		"PersistentVolumeClaim": namespaced, "Endpoints": namespaced, "LimitRange": namespaced, "ResourceQuota": namespaced,
		"ReplicationController": namespaced, "PodTemplate": namespaced, "Event": namespaced, "Binding": namespaced,
	},
	"apps":                {"Deployment": namespaced, "StatefulSet": namespaced, "DaemonSet": namespaced, "ReplicaSet": namespaced, "ControllerRevision": namespaced},
	"batch":               {"Job": namespaced, "CronJob": namespaced},
	"autoscaling":         {"HorizontalPodAutoscaler": namespaced},
	"policy":              {"PodDisruptionBudget": namespaced},
	"networking.k8s.io":   {"NetworkPolicy": namespaced, "Ingress": namespaced, "IngressClass": clusterWide, "IPAddress": clusterWide, "ServiceCIDR": clusterWide},
	"discovery.k8s.io":    {"EndpointSlice": namespaced},
	"coordination.k8s.io": {"Lease": namespaced},
	"events.k8s.io":       {"Event": namespaced},
	"rbac.authorization.k8s.io": {
		"Role": namespaced, "RoleBinding": namespaced, "ClusterRole": clusterWide, "ClusterRoleBinding": clusterWide,
	},
	"apiextensions.k8s.io":   {"CustomResourceDefinition": clusterWide},
	"apiregistration.k8s.io": {"APIService": clusterWide},
	"admissionregistration.k8s.io": {
		"MutatingWebhookConfiguration": clusterWide, "ValidatingWebhookConfiguration": clusterWide,
		"ValidatingAdmissionPolicy": clusterWide, "ValidatingAdmissionPolicyBinding": clusterWide,
		"MutatingAdmissionPolicy": clusterWide, "MutatingAdmissionPolicyBinding": clusterWide,
	},
	"storage.k8s.io": {
		"StorageClass": clusterWide, "CSIDriver": clusterWide, "CSINode": clusterWide, "VolumeAttachment": clusterWide,
		"VolumeAttributesClass": clusterWide, "CSIStorageCapacity": namespaced,
	},
	"scheduling.k8s.io":            {"PriorityClass": clusterWide},
	"node.k8s.io":                  {"RuntimeClass": clusterWide},
	"certificates.k8s.io":          {"CertificateSigningRequest": clusterWide, "ClusterTrustBundle": clusterWide},
	"flowcontrol.apiserver.k8s.io": {"FlowSchema": clusterWide, "PriorityLevelConfiguration": clusterWide},
	"resource.k8s.io":              {"DeviceClass": clusterWide, "ResourceSlice": clusterWide, "ResourceClaim": namespaced, "ResourceClaimTemplate": namespaced},
}
