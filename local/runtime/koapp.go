package runtime

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// koAppDir is where ko puts a ko:// image's binary: /ko-app/<base name of
// the import path>. Commands and exec probes written for a cluster name it
// there (Knative's own test images do: `/ko-app/readiness probe`).
const koAppDir = "/ko-app/"

// koAppPath is the path ko gives the binary of image inside its image, ""
// when image is not ko:// or its name is only known once resolved (a
// relative ko://. or ko://./ names the main module's own package, whose
// base name is the module's, not the path's).
//
// knit dev runs replicas in this machine's file system, where /ko-app does
// not exist: an argv[0] equal to koAppPath(image) is run as the binary
// knit dev built for the image instead (koAppArgv0).
func koAppPath(image string) string {
	pkg, ok := strings.CutPrefix(image, koScheme)
	if !ok {
		return ""
	}
	pkg = strings.TrimSuffix(pkg, "/")
	base := path.Base(pkg)
	if pkg == "" || base == "." || base == ".." {
		return ""
	}
	return koAppDir + base
}

// koAppArgv0 resolves a command's first word for container c: its ko://
// image's path under /ko-app becomes the binary built for the image (build
// finds the pinned build, or builds it); anything else is returned as is.
func koAppArgv0(ctx context.Context, argv0 string, c *corev1.Container, build func(context.Context, string) (string, error)) (string, error) {
	if want := koAppPath(c.Image); want == "" || argv0 != want {
		return argv0, nil
	}
	bin, err := build(ctx, c.Image)
	if err != nil {
		return "", fmt.Errorf("%s is the binary of %s, which did not build: %w", argv0, c.Image, err)
	}
	return bin, nil
}

// koAppBuild is how r finds the binary of one of its ko:// images: the
// build its pod template pinned (a probe that runs every second costs a
// stat), else a build (from the cache when nothing changed).
func (r *replica) koAppBuild(ctx context.Context, image string) (string, error) {
	return r.pins.resolve(ctx, image, func(ctx context.Context, image string) (string, error) {
		moduleDir, f := r.rt.moduleDir(ctx, r.pod)
		if f != nil {
			return "", errors.New(f.Message)
		}
		return r.rt.builderFor(moduleDir).Build(ctx, image)
	})
}

// koAppArgv0For resolves exec commands run for container c (probes,
// hooks) with koAppArgv0.
func (r *replica) koAppArgv0For(c *corev1.Container) func(context.Context, string) (string, error) {
	return func(ctx context.Context, name string) (string, error) {
		return koAppArgv0(ctx, name, c, r.koAppBuild)
	}
}
