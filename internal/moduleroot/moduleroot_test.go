package moduleroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirFindsTheClone(t *testing.T) {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "internal", "moduleroot", "moduleroot.go")); err != nil {
		t.Errorf("Dir() = %s, which does not hold this package: %v", dir, err)
	}
}

func TestModulePath(t *testing.T) {
	for gomod, want := range map[string]string{
		"module github.com/knitops/knit\n\ngo 1.26\n": Module,
		"// x\nmodule \"github.com/knitops/knit\"\n":  Module,
		"module github.com/knitops/knit/hack/bench\n": "github.com/knitops/knit/hack/bench",
		"modules are not a module line\n":             "",
		"go 1.26\n":                                   "",
	} {
		if got := modulePath([]byte(gomod)); got != want {
			t.Errorf("%q: %q, want %q", gomod, got, want)
		}
	}
}
