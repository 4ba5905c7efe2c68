package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// diamonds is a commit whose root refers to d<n>, and every d<k> twice
// (through a left and a right overlay, with name prefixes so that the
// objects do not clash) to d<k-1>, which holds one ConfigMap: kustomize
// builds d0 2^n times.
func diamonds(n int) map[string]string {
	files := map[string]string{
		"kustomization.yaml":    fmt.Sprintf("resources: [d%d]\n", n),
		"d0/kustomization.yaml": "resources: [cm.yaml]\n",
		"d0/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
	}
	for k := 1; k <= n; k++ {
		files[fmt.Sprintf("d%d/kustomization.yaml", k)] = "resources: [l, r]\n"
		for _, side := range []string{"l", "r"} {
			files[fmt.Sprintf("d%d/%s/kustomization.yaml", k, side)] = fmt.Sprintf("namePrefix: %s-\nresources: [../../d%d]\n", side, k-1)
		}
	}
	return files
}

// Bases shared through many paths still render, each path a copy, as
// kustomize does; but 30 levels of them, 3 KiB that kustomize would build
// into a billion ConfigMaps, are refused, naming the directory.
func TestSharedBasesCostEveryBuild(t *testing.T) {
	objs, err := Render(memTree(t, diamonds(3), nil), "")
	if err != nil || len(objs) != 8 || objs[0].GetName() != "l-l-l-cm" {
		t.Fatalf("three levels of shared bases: %d objects (%v), want 8 ConfigMaps", len(objs), err)
	}
	_, err = Render(memTree(t, diamonds(30), nil), "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "kustomize builds this directory again for every kustomization that refers to it") {
		t.Errorf("err = %v, want the shared bases refused", err)
	}
}
