// Package kopath decides which ko:// images knit builds: the text after
// ko:// becomes a positional argument of `go list`, `go build` and
// `go install`, run by knit's build Jobs and by knit dev, so anything
// that is not plainly a package — a flag such as -toolexec=…, a pattern
// such as ./... or all, a path climbing out of the repository — must be
// refused before a go command sees it. It is a leaf package (standard
// library only) so that the cluster build, knit dev and admission share
// one definition.
package kopath

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Scheme prefixes the images knit builds from source, as ko names them.
const Scheme = "ko://"

// maxLen bounds a package path; Go's own paths are far shorter.
const maxLen = 512

// reserved are the names go treats as patterns, not packages.
var reserved = map[string]bool{"all": true, "std": true, "cmd": true, "tool": true, "work": true}

// ErrInvalid marks a ko:// image knit refuses to build.
var ErrInvalid = errors.New("invalid ko:// image")

// Package is the package of a ko:// image, checked: "./dir/sub" (or "."
// for the repository's root), relative to the repository's root, or a
// Go import path. The error says why anything else is refused.
func Package(image string) (string, error) {
	pkg, ok := strings.CutPrefix(image, Scheme)
	if !ok {
		return "", fmt.Errorf("%w %q: it does not start with %s", ErrInvalid, image, Scheme)
	}
	if err := Check(pkg); err != nil {
		return "", fmt.Errorf("%w %q: %w", ErrInvalid, image, err)
	}
	return pkg, nil
}

// Check reports whether pkg, a ko:// image without its scheme, names one
// package: ".", "./", "./dir/sub" (clean, no "..") or an import path as
// golang.org/x/mod/module.CheckImportPath accepts it, minus go's
// reserved pattern names and elements starting with a dot (which go
// ignores in directories anyway).
func Check(pkg string) error {
	switch {
	case pkg == "":
		return errors.New("the package path is empty")
	case len(pkg) > maxLen:
		return fmt.Errorf("the package path is longer than %d bytes", maxLen)
	case !utf8.ValidString(pkg):
		return errors.New("the package path is not valid UTF-8")
	case pkg[0] == '-':
		return errors.New("the package path starts with '-' (go would read it as a flag)")
	case pkg == "." || pkg == "./":
		return nil
	}
	if rel, ok := strings.CutPrefix(pkg, "./"); ok {
		if err := checkPath(rel); err != nil {
			return fmt.Errorf("relative path %q: %w", pkg, err)
		}
		return nil
	}
	if reserved[pkg] {
		return fmt.Errorf("%q is one of go's pattern names, not a package", pkg)
	}
	if err := checkPath(pkg); err != nil {
		return fmt.Errorf("import path %q: %w (use ./dir for a directory of the repository)", pkg, err)
	}
	return nil
}

// CheckPath checks a relative slash path element by element the way
// x/mod checks an import path: no empty, dot-only or hidden elements,
// none starting with '-' or ending with '.', a short alphabet. Paths a
// builder is handed as arguments (a package, a build context) share it.
func CheckPath(p string) error { return checkPath(p) }

// checkPath checks slash-separated elements the way x/mod checks an
// import path.
func checkPath(p string) error {
	if strings.HasSuffix(p, "/") {
		return errors.New("trailing slash")
	}
	for elem := range strings.SplitSeq(p, "/") {
		if err := checkElem(elem); err != nil {
			return err
		}
	}
	return nil
}

func checkElem(elem string) error {
	switch {
	case elem == "":
		return errors.New("empty path element (a double slash)")
	case strings.Count(elem, ".") == len(elem):
		return fmt.Errorf("path element %q is only dots (no .., no ... patterns)", elem)
	case elem[0] == '.':
		return fmt.Errorf("path element %q starts with a dot", elem)
	case elem[0] == '-':
		return fmt.Errorf("path element %q starts with '-'", elem)
	case elem[len(elem)-1] == '.':
		return fmt.Errorf("path element %q ends with a dot", elem)
	}
	for _, r := range elem {
		if !elemRune(r) {
			return fmt.Errorf("path element %q has the character %q (allowed: A-Z a-z 0-9 - . _ ~ +)", elem, r)
		}
	}
	return nil
}

func elemRune(r rune) bool {
	return r == '-' || r == '.' || r == '_' || r == '~' || r == '+' ||
		'0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z'
}
