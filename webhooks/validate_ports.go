package webhooks

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// reservedPorts are the queue-proxy's and profiling ports in a Revision's
// pod (Knative's list): the app cannot listen on them.
var reservedPorts = []int32{8008, 8012, 8013, 8022, 9090, 9091}

// portNames are the names Knative gives meaning to: the protocol the
// queue-proxy speaks to the app. Any other name would be silently ignored.
var portNames = []string{"", "http1", "h2c"}

// validatePort is Knative's validateContainerPorts for one port.
func validatePort(port corev1.ContainerPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range disallowedFields(port, "containerPort", "name", "protocol") {
		errs = append(errs, field.Forbidden(p.Child(f), "must not set the field(s)"))
	}
	if slices.Contains(reservedPorts, port.ContainerPort) {
		errs = append(errs, field.Invalid(p.Child("containerPort"), port.ContainerPort,
			fmt.Sprintf("%d is a reserved port, please use a different value", port.ContainerPort)))
	}
	if port.ContainerPort < 0 || port.ContainerPort > 65535 {
		errs = append(errs, field.Invalid(p.Child("containerPort"), port.ContainerPort, "must be between 0 and 65535"))
	}
	if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
		errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol, []corev1.Protocol{corev1.ProtocolTCP}))
	}
	if !slices.Contains(portNames, port.Name) {
		errs = append(errs, field.NotSupported(p.Child("name"), port.Name, portNames))
	}
	return errs
}
