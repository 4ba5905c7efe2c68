//go:build !unit

package charttest

import (
	"strings"
	"testing"
)

// helm lint passes, strictly, for each Service type the ingress may have.
func TestLint(t *testing.T) {
	for _, flags := range [][]string{
		nil,
		{"--set", "ingress.service.type=LoadBalancer"},
		{"--set", "ingress.service.type=ClusterIP", "--set", "gitserver.service.type=NodePort"},
	} {
		t.Run(strings.Join(append([]string{"defaults"}, flags...), " "), func(t *testing.T) {
			out, err := helm(t, append([]string{"lint", chartDir, "--strict", "--namespace", "knit-system"}, flags...)...)
			if err != nil {
				t.Fatalf("helm lint: %v\n%s", err, out)
			}
			// Lint reports a template's fail as INFO and carries on; the
			// chart must not fail at all with valid values.
			if strings.Contains(out, "Fail:") || strings.Contains(out, "[WARNING]") || strings.Contains(out, "[ERROR]") {
				t.Errorf("helm lint:\n%s", out)
			}
		})
	}
}

// Anywhere but knit-system the chart refuses to render, and says how to
// install it; values that cannot work are refused too.
func TestRenderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"another namespace", []string{"template", "knit", chartDir, "--namespace", "default"},
			`knit must be installed in the namespace knit-system, not "default"`},
		{"no namespace", []string{"template", "knit", chartDir},
			"helm install knit charts/knit -n knit-system --create-namespace"},
		{"unknown Service type", []string{"template", "knit", chartDir, "-n", "knit-system", "--set", "ingress.service.type=Ingress"},
			`ingress.service.type "Ingress": want ClusterIP, NodePort or LoadBalancer`},
		{"fractional quiet period", []string{"template", "knit", chartDir, "-n", "knit-system", "--set", "drainQuietPeriod=1.5s"},
			`drainQuietPeriod "1.5s": want a duration of whole hours, minutes and seconds`},
		{"no replicas", []string{"template", "knit", chartDir, "-n", "knit-system", "--set", "activator.replicas=0"},
			"activator.replicas must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := helm(t, tc.args...)
			if err == nil {
				t.Fatalf("helm %s rendered:\n%.300s…", strings.Join(tc.args, " "), out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("helm %s failed with\n%v\nwant it to say %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
}
