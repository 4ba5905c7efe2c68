package nodefit

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// List is r as a node's status.allocatable; a resource r does not limit
// (0) is left out.
func (r Requests) List() corev1.ResourceList {
	l := corev1.ResourceList{}
	if r.CPUMilli > 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.CPUMilli, resource.DecimalSI)
	}
	if r.Memory > 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(r.Memory, resource.BinarySI)
	}
	return l
}
