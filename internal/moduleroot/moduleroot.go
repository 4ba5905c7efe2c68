// Package moduleroot finds knit's own clone from inside it: tests and
// test helpers run in their package's directory and look for binaries
// `make` built into the clone's bin/ and build outputs beside it.
package moduleroot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Module is knit's module path.
const Module = "github.com/knitops/knit"

// Dir is the nearest directory at or above the working one whose go.mod
// declares Module. The error says where it looked; callers add what to do
// instead (a flag or variable naming the file they wanted).
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && modulePath(data) == Module {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s at or above %s", Module, wd)
		}
		dir = parent
	}
}

// modulePath is a go.mod's module path.
func modulePath(gomod []byte) string {
	for line := range strings.Lines(string(gomod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}
