// Package queuesidecar holds Knative's queue.sidecar.serving.knative.dev
// annotations, with which a Revision sizes its queue-proxy, and the
// arithmetic that turns them, config-deployment's queue-sidecar-* keys and
// config-features queueproxy.resource-defaults into the queue-proxy's
// requests and limits. Admission and the Revision reconciler read them
// through the same parser, so what is accepted is what is applied.
package queuesidecar

import (
	"fmt"
	"math"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The annotations, in Knative's spelling. ResourcePercentage is
// deprecated in Knative (a warning there) but still honoured, as there.
const (
	prefix                          = "queue.sidecar.serving.knative.dev/"
	ResourcePercentage              = prefix + "resource-percentage"
	resourcePercentageOld           = prefix + "resourcePercentage"
	CPUResourceRequest              = prefix + "cpu-resource-request"
	CPUResourceLimit                = prefix + "cpu-resource-limit"
	MemoryResourceRequest           = prefix + "memory-resource-request"
	MemoryResourceLimit             = prefix + "memory-resource-limit"
	EphemeralStorageResourceRequest = prefix + "ephemeral-storage-resource-request"
	EphemeralStorageResourceLimit   = prefix + "ephemeral-storage-resource-limit"
)

// Settings are config-deployment's queue-sidecar-* keys: what every
// queue-proxy gets unless its Revision says otherwise; nil is unset.
type Settings struct {
	CPURequest, CPULimit                           *resource.Quantity
	MemoryRequest, MemoryLimit                     *resource.Quantity
	EphemeralStorageRequest, EphemeralStorageLimit *resource.Quantity
}

// Knative's defaults under queueproxy.resource-defaults (its
// deployment.QueueSidecar*Default): sized for its Go queue-proxy.
var defaults = Settings{
	CPURequest: ptr(resource.MustParse("25m")), CPULimit: ptr(resource.MustParse("1000m")),
	MemoryRequest: ptr(resource.MustParse("400Mi")), MemoryLimit: ptr(resource.MustParse("800Mi")),
}

// bounds clamp what resource-percentage computes, as Knative's
// resourceBoundary does: a tiny app still gets a working queue-proxy, a
// huge one does not hand it gigabytes.
type bounds struct{ min, max resource.Quantity }

var (
	requestCPU    = bounds{resource.MustParse("25m"), resource.MustParse("100m")}
	limitCPU      = bounds{resource.MustParse("40m"), resource.MustParse("500m")}
	requestMemory = bounds{resource.MustParse("50Mi"), resource.MustParse("200Mi")}
	limitMemory   = bounds{resource.MustParse("200Mi"), resource.MustParse("500Mi")}
)

func (b bounds) clamp(q resource.Quantity) resource.Quantity {
	switch {
	case q.Cmp(b.min) < 0:
		return b.min
	case q.Cmp(b.max) > 0:
		return b.max
	}
	return q
}

// Problem is one annotation Validate refuses.
type Problem struct {
	Key, Value string
	// Detail says what is accepted.
	Detail string
}

func (p Problem) Error() string {
	return fmt.Sprintf("%s: invalid value %q: %s", p.Key, p.Value, p.Detail)
}

// Validate is Knative's validateQueueSidecarResourceAnnotations: each
// quantity parses, and a percentage is a number in [0.1, 100].
func Validate(annotations map[string]string) []Problem {
	var out []Problem
	if key, v, ok := percentage(annotations); ok {
		if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0.1 || f > 100 {
			out = append(out, Problem{Key: key, Value: v, Detail: "want a percentage between 0.1 and 100"})
		}
	}
	for _, key := range []string{CPUResourceRequest, CPUResourceLimit, MemoryResourceRequest, MemoryResourceLimit,
		EphemeralStorageResourceRequest, EphemeralStorageResourceLimit} {
		if v, ok := annotations[key]; ok {
			if _, err := resource.ParseQuantity(v); err != nil {
				out = append(out, Problem{Key: key, Value: v, Detail: "want a quantity such as 100m or 400Mi"})
			}
		}
	}
	return out
}

func percentage(annotations map[string]string) (key, value string, ok bool) {
	for _, k := range []string{ResourcePercentage, resourcePercentageOld} {
		if v, ok := annotations[k]; ok {
			return k, v, true
		}
	}
	return "", "", false
}

// Resources are the queue-proxy's requests and limits, in Knative's order
// of precedence (its createQueueResources): config-deployment's keys, or
// Knative's defaults where unset when useDefaults
// (queueproxy.resource-defaults); then resource-percentage of the app's
// own CPU and memory, clamped; then each explicit annotation. Values that
// do not parse are ignored here: admission refuses them first.
func Resources(annotations map[string]string, app *corev1.Container, s Settings, useDefaults bool) corev1.ResourceRequirements {
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	set := func(l corev1.ResourceList, name corev1.ResourceName, q, def *resource.Quantity) {
		switch {
		case q != nil:
			l[name] = *q
		case useDefaults && def != nil:
			l[name] = *def
		}
	}
	set(req, corev1.ResourceCPU, s.CPURequest, defaults.CPURequest)
	set(lim, corev1.ResourceCPU, s.CPULimit, defaults.CPULimit)
	set(req, corev1.ResourceMemory, s.MemoryRequest, defaults.MemoryRequest)
	set(lim, corev1.ResourceMemory, s.MemoryLimit, defaults.MemoryLimit)
	set(req, corev1.ResourceEphemeralStorage, s.EphemeralStorageRequest, nil)
	set(lim, corev1.ResourceEphemeralStorage, s.EphemeralStorageLimit, nil)

	if _, v, ok := percentage(annotations); ok {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			scale := func(l corev1.ResourceList, name corev1.ResourceName, of resource.Quantity, b bounds) {
				if !of.IsZero() {
					l[name] = b.clamp(fraction(of, f/100))
				}
			}
			scale(req, corev1.ResourceCPU, *app.Resources.Requests.Cpu(), requestCPU)
			scale(lim, corev1.ResourceCPU, *app.Resources.Limits.Cpu(), limitCPU)
			scale(req, corev1.ResourceMemory, *app.Resources.Requests.Memory(), requestMemory)
			scale(lim, corev1.ResourceMemory, *app.Resources.Limits.Memory(), limitMemory)
		}
	}
	for key, at := range map[string]struct {
		l    corev1.ResourceList
		name corev1.ResourceName
	}{
		CPUResourceRequest: {req, corev1.ResourceCPU}, CPUResourceLimit: {lim, corev1.ResourceCPU},
		MemoryResourceRequest: {req, corev1.ResourceMemory}, MemoryResourceLimit: {lim, corev1.ResourceMemory},
		EphemeralStorageResourceRequest: {req, corev1.ResourceEphemeralStorage}, EphemeralStorageResourceLimit: {lim, corev1.ResourceEphemeralStorage},
	} {
		if q, err := resource.ParseQuantity(annotations[key]); err == nil {
			at.l[at.name] = q
		}
	}
	out := corev1.ResourceRequirements{}
	if len(req) > 0 {
		out.Requests = req
	}
	if len(lim) > 0 {
		out.Limits = lim
	}
	return out
}

// fraction is f of q in milli-units, saturating rather than overflowing
// for quantities too large to count in thousandths.
func fraction(q resource.Quantity, f float64) resource.Quantity {
	milli := int64(math.MaxInt64 - 1)
	if q.Value() < math.MaxInt64/1000 {
		milli = q.MilliValue()
	}
	v := float64(milli) * f
	n := int64(math.MaxInt64)
	if v < math.MaxInt64 {
		n = int64(v)
	}
	return *resource.NewMilliQuantity(n, resource.BinarySI)
}

func ptr(q resource.Quantity) *resource.Quantity { return &q }
