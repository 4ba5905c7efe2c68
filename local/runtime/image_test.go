package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestKnitCommand(t *testing.T) {
	withLean := t.TempDir()
	for name, mode := range map[string]os.FileMode{"knit": 0o755, "knit-queue": 0o755, "knit-activator": 0o644} {
		if err := os.WriteFile(filepath.Join(withLean, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	alone := t.TempDir()
	tests := []struct {
		name       string
		executable string
		sub        string
		args       []string
		want       []string
	}{
		{"the lean binary beside knit", filepath.Join(withLean, "knit"), "queue", nil, []string{filepath.Join(withLean, "knit-queue")}},
		{"args are the lean binary's flags", filepath.Join(withLean, "knit"), "queue", []string{"-v", "1"}, []string{filepath.Join(withLean, "knit-queue"), "-v", "1"}},
		{"not executable: the subcommand", filepath.Join(withLean, "knit"), "activator", nil, []string{filepath.Join(withLean, "knit"), "activator"}},
		{"knit alone: the subcommand", filepath.Join(alone, "knit"), "queue", nil, []string{filepath.Join(alone, "knit"), "queue"}},
		{"args are the subcommand's flags", filepath.Join(alone, "knit"), "queue", []string{"-v", "1"}, []string{filepath.Join(alone, "knit"), "queue", "-v", "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := knitCommand(tt.executable, tt.sub, tt.args); !slices.Equal(got, tt.want) {
				t.Errorf("knitCommand(%s, %s, %q) = %q, want %q", tt.executable, tt.sub, tt.args, got, tt.want)
			}
		})
	}
}
