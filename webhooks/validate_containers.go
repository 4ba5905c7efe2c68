package webhooks

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/knitops/knit/config"
	"github.com/knitops/knit/gitsync/build/dockerfile"
	"github.com/knitops/knit/gitsync/build/kopath"
)

// containerFields are the Container fields Knative lets a Revision set
// (its ContainerMask); lifecycle, stdin, stdinOnce, tty, startupProbe,
// volumeDevices and anything newer are refused.
var containerFields = []string{
	"name", "args", "command", "env", "workingDir", "envFrom", "image", "imagePullPolicy",
	"livenessProbe", "ports", "readinessProbe", "resources", "securityContext",
	"terminationMessagePath", "terminationMessagePolicy", "volumeMounts",
}

// reservedContainerName is the queue-proxy sidecar's name.
const reservedContainerName = "queue-proxy"

// validateContainers is Knative's container part of ValidatePodSpec: at
// least one container, exactly one that receives requests (the only one,
// or the only one with a port), unique names and Knative's field subset.
// path is the pod spec's path.
func validateContainers(cs []corev1.Container, path *field.Path, features config.Features) field.ErrorList {
	cp := path.Child("containers")
	if len(cs) == 0 {
		return field.ErrorList{field.Required(cp, "a Revision needs a container to serve requests")}
	}
	if len(cs) > 1 && features.MultiContainer != config.FeatureEnabled {
		return field.ErrorList{field.Forbidden(cp, fmt.Sprintf("multi-container is off, but found %d containers (config-features multi-container)", len(cs)))}
	}
	errs := validateServingPort(cs, cp)
	serving := servingContainer(cs)
	names := map[string]bool{}
	for i, c := range cs {
		p := cp.Index(i)
		if names[c.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		}
		names[c.Name] = true
		if c.Name == reservedContainerName {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, "is reserved for knit's queue-proxy"))
		}
		errs = append(errs, validateContainer(c, p, i == serving, features)...)
		switch {
		case i == serving:
			errs = append(errs, validateServingProbes(c, p)...)
		case features.MultiContainerProbing == config.FeatureEnabled:
			errs = append(errs, validateProbedSidecar(c, p)...)
		default:
			errs = append(errs, validateSidecarProbes(c, p)...)
		}
	}
	return errs
}

// validateContainer checks what every container of a Revision, init
// containers included, must satisfy: Knative's field subset, an image (a
// ko:// path go build can take), its securityContext, ports and env. p is
// the container's path.
func validateContainer(c corev1.Container, p *field.Path, serving bool, features config.Features) field.ErrorList {
	var errs field.ErrorList
	for _, f := range disallowedFields(c, containerFields...) {
		errs = append(errs, field.Forbidden(p.Child(f), "must not set the field(s)"))
	}
	if c.Name != "" {
		// Kubernetes' rule for a container's name: the Deployment would
		// be refused later, with the Revision waiting for nothing.
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), c.Name, msg))
		}
	}
	switch {
	case c.Image == "":
		errs = append(errs, field.Required(p.Child("image"), ""))
	case strings.HasPrefix(c.Image, kopath.Scheme):
		// Its path reaches go build as an argument (knit dev, build Jobs).
		if err := kopath.Check(strings.TrimPrefix(c.Image, kopath.Scheme)); err != nil {
			errs = append(errs, field.Invalid(p.Child("image"), c.Image, err.Error()))
		}
	case dockerfile.IsRef(c.Image):
		// Its directory and settings reach BuildKit (knit's Git path).
		if _, err := dockerfile.Parse(c.Image); err != nil {
			errs = append(errs, field.Invalid(p.Child("image"), c.Image, err.Error()))
		}
	case !strings.Contains(c.Image, "://"):
		// knit's own schemes aside, an image is a registry reference,
		// refused as Knative refuses one that does not parse.
		if _, err := name.ParseReference(c.Image, name.WeakValidation); err != nil {
			errs = append(errs, field.Invalid(p.Child("image"), c.Image, "Failed to parse image reference: "+err.Error()))
		}
	}
	errs = append(errs, validateSecurityContext(c.SecurityContext, p.Child("securityContext"), features)...)
	for j, port := range c.Ports {
		errs = append(errs, validatePort(port, p.Child("ports").Index(j))...)
	}
	return append(errs, validateEnv(c.Env, p.Child("env"), serving, features)...)
}

// validateServingPort checks that one port, on one container, says where
// requests go: Knative allows a single port across all containers, and
// with several containers requires it.
func validateServingPort(cs []corev1.Container, cp *field.Path) field.ErrorList {
	var errs field.ErrorList
	first := -1
	for i, c := range cs {
		for j := 1; j < len(c.Ports); j++ {
			errs = append(errs, field.Forbidden(cp.Index(i).Child("ports").Index(j),
				"only one port may be declared: the one requests are sent to"))
		}
		switch {
		case len(c.Ports) == 0:
		case first < 0:
			first = i
		default:
			errs = append(errs, field.Forbidden(cp.Index(i).Child("ports"),
				fmt.Sprintf("only one container may declare a port, and %s already does", cp.Index(first))))
		}
	}
	if first < 0 && len(cs) > 1 {
		errs = append(errs, field.Required(cp,
			"with several containers, the one that serves requests must declare its port in ports"))
	}
	return errs
}

// reservedEnv are set by knit in the serving container; sidecars may set
// PORT, which means nothing to them.
var reservedEnv = []string{"PORT", "K_SERVICE", "K_CONFIGURATION", "K_REVISION"}

// validateEnv refuses reserved names and, unless
// kubernetes.podspec-fieldref is on, values from the downward API: a pod's
// fields and resources are the platform's to expose (Knative's
// EnvVarSourceMask).
func validateEnv(env []corev1.EnvVar, path *field.Path, serving bool, features config.Features) field.ErrorList {
	var errs field.ErrorList
	allowed := []string{"configMapKeyRef", "secretKeyRef"}
	if features.PodSpecFieldRef.On() {
		allowed = append(allowed, "fieldRef", "resourceFieldRef")
	}
	for i, e := range env {
		for _, r := range reservedEnv {
			if e.Name == r && (serving || r != "PORT") {
				errs = append(errs, field.Invalid(path.Index(i).Child("name"), e.Name, "is a reserved environment variable"))
			}
		}
		if e.ValueFrom == nil {
			continue
		}
		for _, f := range disallowedFields(*e.ValueFrom, allowed...) {
			msg := "must not set the field(s)"
			if f == "fieldRef" || f == "resourceFieldRef" {
				msg = flagOff("kubernetes.podspec-fieldref")
			}
			errs = append(errs, field.Forbidden(path.Index(i).Child("valueFrom", f), msg))
		}
	}
	return errs
}
