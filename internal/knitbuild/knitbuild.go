// Package knitbuild builds knit and knit-queue from a source tree the way
// `make build` does, for the end-to-end tests and the benchmarks: they must
// run what a user runs, and knit-queue's footprint depends on how it is
// linked.
package knitbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build builds knit, and knit-queue beside it, from the module at root
// into dir and returns knit's path. knit-queue is built without cgo: a
// replica's queue-proxy resolves no names (it dials 127.0.0.1), and a
// static binary maps no libc: 1.7 MiB less RSS in every replica.
func Build(ctx context.Context, root, dir string) (string, error) {
	out := dir + string(filepath.Separator)
	if err := goBuild(ctx, root, nil, "-o", out, "./cmd/knit"); err != nil {
		return "", err
	}
	if err := goBuild(ctx, root, []string{"CGO_ENABLED=0"}, "-o", out, "./cmd/knit-queue"); err != nil {
		return "", err
	}
	return filepath.Join(dir, "knit"), nil
}

func goBuild(ctx context.Context, root string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.TrimSpace(strings.Join(env, " ")+" go build "+strings.Join(args, " ")), err, out)
	}
	return nil
}
