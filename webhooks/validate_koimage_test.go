package webhooks

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A ko:// image's path reaches go build as an argument, a dockerfile://
// image's directory and settings reach BuildKit: admission refuses one
// that is not plainly a package, or a directory with known settings, on
// the container's image field.
func TestValidateContainersKoImage(t *testing.T) {
	path := field.NewPath("spec", "template", "spec")
	for image, want := range map[string]string{
		"ko://./cmd/hello":                            "",
		"ko://example.com/tool/v2":                    "",
		"ko://-toolexec=/bin/sh":                      "starts with '-'",
		"ko://./cmd/hello -o /tmp/x":                  "character ' '",
		"ko://./...":                                  "only dots",
		"ko://../outside":                             "only dots",
		"registry.example/app:v1":                     "",
		"ko://./cmd/hello@sha256:abc":                 "character '@'",
		"dockerfile://./web":                          "",
		"dockerfile://./web?target=run&build-arg=V=1": "",
		"dockerfile://./../web":                       "only dots",
		"dockerfile://./web?output=type=local":        "unknown setting",
		"dockerfile://./web?target=--push":            "stage name",
	} {
		errs := validateContainers([]corev1.Container{{Name: "app", Image: image}}, path, DefaultConfig().Features)
		var got *field.Error
		for _, e := range errs {
			if e.Field == "spec.template.spec.containers[0].image" {
				got = e
			}
		}
		switch {
		case want == "" && got != nil:
			t.Errorf("%s refused: %v", image, got)
		case want != "" && (got == nil || got.Type != field.ErrorTypeInvalid || !strings.Contains(got.Detail, want)):
			t.Errorf("%s: errors %v, want an invalid-value error on containers[0].image saying %q", image, errs, want)
		}
	}
}
