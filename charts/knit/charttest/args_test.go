//go:build !unit

package charttest

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArgsAreKnitFlags runs the knit binary with every component's
// rendered arguments, so a flag the chart passes and knit does not define
// (a pod that would crash-loop on a real cluster) fails here instead.
func TestArgsAreKnitFlags(t *testing.T) {
	// Builds on, every build value set: their flags are rendered too.
	m := render(t, "--set", "build.registry=registry.example/knit", "--set", "build.registrySecret=push",
		"--set", "build.goproxy=https://proxy.example")
	knit := filepath.Join(t.TempDir(), "knit")
	build := exec.Command("go", "build", "-o", knit, "github.com/knitops/knit/cmd/knit")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build knit: %v\n%s", err, out)
	}
	workloads := map[string]string{
		"knit-controller": "Deployment", "knit-autoscaler": "Deployment", "knit-activator": "Deployment",
		"knit-ingress": "Deployment", "knit-gitserver": "StatefulSet",
	}
	for name, kind := range workloads {
		t.Run(name, func(t *testing.T) {
			c := podSpec(t, m, kind, name).Containers[0]
			// -h after the chart's flags: knit parses them all, then prints
			// its usage; an unknown one stops it before.
			out, _ := exec.Command(knit, append(append(c.Command, c.Args...), "-h")...).CombinedOutput()
			if strings.Contains(string(out), "flag provided but not defined") || strings.Contains(string(out), "unknown command") ||
				strings.Contains(string(out), "invalid value") {
				t.Errorf("knit %s: %s", strings.Join(c.Args, " "), lastLine(string(out)))
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
