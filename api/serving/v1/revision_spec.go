package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RevisionTemplateSpec is what a Configuration stamps each Revision from.
type RevisionTemplateSpec struct {
	// Metadata of the Revision to create: its name (which must start with
	// the Service's name), labels and annotations such as
	// autoscaling.knative.dev/*.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec of the Revision to create.
	// +optional
	Spec RevisionSpec `json:"spec,omitempty"`
}

// RevisionSpec is the immutable part of a Revision: the pod to run plus
// the serving knobs the queue-proxy enforces.
type RevisionSpec struct {
	PodSpec `json:",inline"`

	// ContainerConcurrency is the most requests one replica handles at
	// once; 0 means no limit.
	// +optional
	ContainerConcurrency *int64 `json:"containerConcurrency,omitempty"`
	// TimeoutSeconds is the longest a request may take end to end.
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
	// ResponseStartTimeoutSeconds is the longest the app may take to send
	// the first byte of its response.
	// +optional
	ResponseStartTimeoutSeconds *int64 `json:"responseStartTimeoutSeconds,omitempty"`
	// IdleTimeoutSeconds is the longest a response may pause between bytes.
	// +optional
	IdleTimeoutSeconds *int64 `json:"idleTimeoutSeconds,omitempty"`
}

// PodSpec is the part of a Kubernetes PodSpec that Knative lets a Revision
// set. Fields a serverless replica must not control (host networking,
// restart policy, node name) are left out on purpose; the scheduling and
// DNS fields are here but admission refuses each until its config-features
// flag is on, as Knative's does.
type PodSpec struct {
	// InitContainers run to completion, in order, before the containers
	// start (config-features kubernetes.podspec-init-containers).
	// +optional
	InitContainers []corev1.Container `json:"initContainers,omitempty"`
	// Containers of the Revision: exactly one of them serves traffic.
	Containers []corev1.Container `json:"containers"`
	// Volumes the containers may mount.
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`
	// ServiceAccountName the replicas run as.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// ImagePullSecrets used to pull the images.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`
	// EnableServiceLinks injects Service environment variables, as in a Pod.
	// +optional
	EnableServiceLinks *bool `json:"enableServiceLinks,omitempty"`
	// AutomountServiceAccountToken as in a Pod.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`
	// NodeSelector as in a Pod.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Tolerations as in a Pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// RuntimeClassName as in a Pod.
	// +optional
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`
	// SecurityContext of the pod.
	// +optional
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`
	// Affinity as in a Pod (kubernetes.podspec-affinity).
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`
	// TopologySpreadConstraints as in a Pod
	// (kubernetes.podspec-topologyspreadconstraints).
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`
	// HostAliases as in a Pod (kubernetes.podspec-hostaliases).
	// +optional
	HostAliases []corev1.HostAlias `json:"hostAliases,omitempty"`
	// ShareProcessNamespace as in a Pod
	// (kubernetes.podspec-shareprocessnamespace).
	// +optional
	ShareProcessNamespace *bool `json:"shareProcessNamespace,omitempty"`
	// PriorityClassName as in a Pod (kubernetes.podspec-priorityclassname).
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// SchedulerName as in a Pod (kubernetes.podspec-schedulername).
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// DNSPolicy as in a Pod (kubernetes.podspec-dnspolicy).
	// +optional
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`
	// DNSConfig as in a Pod (kubernetes.podspec-dnsconfig).
	// +optional
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty"`
}
