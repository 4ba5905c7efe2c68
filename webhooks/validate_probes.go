package webhooks

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// maxInt32 is the largest value an int32 field takes.
const maxInt32 = math.MaxInt32

// bounds says which integers are accepted.
func bounds(lo, hi int64) string {
	return fmt.Sprintf("must be between %d and %d", lo, hi)
}

// validateServingProbes is Knative's probe validation for the container
// that serves: one handler per probe, probing the serving port, and
// readiness settings the queue-proxy can follow.
func validateServingProbes(c corev1.Container, p *field.Path) field.ErrorList {
	var servingPort corev1.ContainerPort
	if len(c.Ports) > 0 {
		servingPort = c.Ports[0]
	}
	errs := validateProbe(c.LivenessProbe, servingPort, p.Child("livenessProbe"))
	errs = append(errs, validateProbe(c.ReadinessProbe, servingPort, p.Child("readinessProbe"))...)
	return append(errs, validateReadinessSettings(c.ReadinessProbe, p.Child("readinessProbe"))...)
}

// validateSidecarProbes refuses probes on containers that do not serve
// while multi-container-probing is off: then, as in Knative, only the
// serving container is probed.
func validateSidecarProbes(c corev1.Container, p *field.Path) field.ErrorList {
	const why = "only the container that serves requests may be probed (config-features multi-container-probing is off)"
	var errs field.ErrorList
	if c.LivenessProbe != nil {
		errs = append(errs, field.Forbidden(p.Child("livenessProbe"), why))
	}
	if c.ReadinessProbe != nil {
		errs = append(errs, field.Forbidden(p.Child("readinessProbe"), why))
	}
	return errs
}

// validateProbe checks a probe has exactly one handler and that a port it
// names is the serving port's name; a number is left to the probe (0 is
// the serving port).
func validateProbe(pr *corev1.Probe, port corev1.ContainerPort, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	var handlers []string
	if h := pr.HTTPGet; h != nil {
		handlers = append(handlers, "httpGet")
		errs = append(errs, validateProbePort(h.Port.StrVal, port, p.Child("httpGet", "port"))...)
	}
	if h := pr.TCPSocket; h != nil {
		handlers = append(handlers, "tcpSocket")
		errs = append(errs, validateProbePort(h.Port.StrVal, port, p.Child("tcpSocket", "port"))...)
	}
	if pr.Exec != nil {
		handlers = append(handlers, "exec")
	}
	if pr.GRPC != nil {
		handlers = append(handlers, "grpc")
	}
	switch {
	case len(handlers) == 0:
		errs = append(errs, field.Required(p, "set one of httpGet, tcpSocket, exec or grpc"))
	case len(handlers) > 1:
		errs = append(errs, field.Forbidden(p, "set only one of "+strings.Join(handlers, ", ")))
	}
	return errs
}

func validateProbePort(name string, port corev1.ContainerPort, p *field.Path) field.ErrorList {
	if name == "" || name == port.Name {
		return nil
	}
	return field.ErrorList{field.Invalid(p, name, "probe port must match container port")}
}

// validateReadinessSettings follows Knative's validateReadinessProbe: periodSeconds
// 0 asks the queue-proxy for its aggressive probing, which has no timeout
// or failure threshold of its own.
func validateReadinessSettings(pr *corev1.Probe, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	atLeast := func(name string, v, lo int32) {
		if v < lo {
			errs = append(errs, field.Invalid(p.Child(name), v, bounds(int64(lo), maxInt32)))
		}
	}
	atLeast("periodSeconds", pr.PeriodSeconds, 0)
	atLeast("initialDelaySeconds", pr.InitialDelaySeconds, 0)
	atLeast("successThreshold", pr.SuccessThreshold, 1)
	if pr.PeriodSeconds == 0 {
		if pr.FailureThreshold != 0 {
			errs = append(errs, field.Forbidden(p.Child("failureThreshold"), "must not be set when periodSeconds is 0"))
		}
		if pr.TimeoutSeconds != 0 {
			errs = append(errs, field.Forbidden(p.Child("timeoutSeconds"), "must not be set when periodSeconds is 0"))
		}
		return errs
	}
	// Knative wants both at least 1 here; knit reads 0 as Kubernetes'
	// default, as the Deployment will.
	atLeast("timeoutSeconds", pr.TimeoutSeconds, 0)
	atLeast("failureThreshold", pr.FailureThreshold, 0)
	return errs
}

// validateProbedSidecar is Knative's sidecar probe validation under
// multi-container-probing: one handler per probe, and a port named by
// every network probe, since the queue-proxy probes a sidecar's
// readiness at that port (the serving port means nothing to it).
func validateProbedSidecar(c corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, probe := range []struct {
		name string
		pr   *corev1.Probe
	}{{"livenessProbe", c.LivenessProbe}, {"readinessProbe", c.ReadinessProbe}} {
		if probe.pr == nil {
			continue
		}
		pp := p.Child(probe.name)
		errs = append(errs, validateProbe(probe.pr, corev1.ContainerPort{}, pp)...)
		h := probe.pr.ProbeHandler
		switch {
		case h.HTTPGet != nil && h.HTTPGet.Port.String() == "0":
			errs = append(errs, field.Invalid(pp.Child("httpGet", "port"), h.HTTPGet.Port.String(), "Probe port must be specified"))
		case h.TCPSocket != nil && h.TCPSocket.Port.String() == "0":
			errs = append(errs, field.Invalid(pp.Child("tcpSocket", "port"), h.TCPSocket.Port.String(), "Probe port must be specified"))
		case h.GRPC != nil && h.GRPC.Port <= 0:
			errs = append(errs, field.Invalid(pp.Child("grpc", "port"), h.GRPC.Port, "Probe port must be specified"))
		}
	}
	return append(errs, validateReadinessSettings(c.ReadinessProbe, p.Child("readinessProbe"))...)
}
