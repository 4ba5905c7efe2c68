package build

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"strings"

	"github.com/knitops/knit/gitsync/build/dockerfile"
	"github.com/knitops/knit/gitsync/build/kopath"
)

// Scheme prefixes the images knit builds from source, as ko names them.
const Scheme = kopath.Scheme

// IsSource reports whether image is built from source: ko://… (a Go
// package) or dockerfile://… (a directory with a Dockerfile).
func IsSource(image string) bool {
	return strings.HasPrefix(image, Scheme) || dockerfile.IsRef(image)
}

// CheckSource refuses a source image knit would not build: a ko:// image
// that is not plainly a package, a dockerfile:// image that is not plainly
// a directory of the repository with known settings. The error wraps
// kopath.ErrInvalid or dockerfile.ErrInvalid and says why.
func CheckSource(image string) error {
	if dockerfile.IsRef(image) {
		_, err := dockerfile.Parse(image)
		return err
	}
	return CheckImage(image)
}

// Key identifies a build: equal keys build byte-identical images, so a key
// already built is never built again. toolchain is the builder image by
// reference, platform os/arch, namespace the GitRepository's (so one
// tenant's build, Job and recorded digest are never another's), tree the
// commit's root tree hash and image the ko:// reference.
func Key(toolchain, platform, namespace, tree, image string) string {
	h := sha256.New()
	fmt.Fprintf(h, "knit build v2\ntoolchain %s\nplatform %s\nnamespace %s\ntree %s\npackage %s\n",
		toolchain, platform, namespace, tree, Package(image))
	return hex.EncodeToString(h.Sum(nil))
}

// Package is what go build is asked for: the ko:// image without its
// scheme, relative to the repository's root. It does not check it:
// CheckImage does, before anything is built.
func Package(image string) string { return strings.TrimPrefix(image, Scheme) }

// CheckImage refuses a ko:// image whose path is not plainly one package
// (kopath.Check): its path becomes an argument of go build, which must
// never read it as a flag or a pattern. The error wraps kopath.ErrInvalid.
func CheckImage(image string) error {
	_, err := kopath.Package(image)
	return err
}

// Repository is where in the registry an image of a GitRepository goes:
// <registry>/<namespace>/<repository>/<name>, a ko:// image named the way
// go install names the binary, a dockerfile:// one after its directory.
func Repository(registry, namespace, repository, image string) string {
	return strings.TrimSuffix(registry, "/") + "/" + namespace + "/" + repository + "/" + imageName(repository, image)
}

// imageName is the last element of an image's repository: the program of
// a ko:// image, the context directory of a dockerfile:// one.
func imageName(repository, image string) string {
	if dockerfile.IsRef(image) {
		if ref, err := dockerfile.Parse(image); err == nil {
			return ref.Name(repository)
		}
	}
	return program(Package(image), repository)
}

// program is the binary's name: the package path's last element, without
// a major-version suffix; the repository's name for the root package.
func program(pkg, repository string) string {
	p := path.Clean(strings.TrimPrefix(pkg, "./"))
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" && path.Dir(p) != "." {
		base = path.Base(path.Dir(p))
	}
	if base == "." || base == ".." || base == "/" {
		return repository
	}
	return strings.ToLower(base)
}

// JobName is the build Job of a key: short enough for the job-name label
// its pods carry.
func JobName(key string) string { return "knit-build-" + key[:16] }
