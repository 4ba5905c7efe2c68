// Package dockerfile decides which dockerfile:// images knit builds and
// how: `dockerfile://./web` names a directory of the repository holding a
// Dockerfile, built with BuildKit from exactly the pushed commit, the way
// `ko://./cmd/hello` names a Go package. Build settings ride in the
// reference's query, with docker build's words, so that one container's
// image says everything its build needs and two containers may build the
// same directory two ways:
//
//	dockerfile://./web?target=runtime&file=Dockerfile.prod&build-arg=VERSION=1.2
//
// The directory and the Dockerfile's path become BuildKit's local sources
// (paths on the builder's disk) and the target and arguments frontend
// options, so anything that is not plainly a path inside the repository or
// a plain name is refused here, before admission, a build or a key exists.
// It depends on kopath alone (whose path rules it shares): admission,
// the Git path and the builders share one definition.
package dockerfile

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/knitops/knit/gitsync/build/kopath"
)

// Scheme prefixes the images knit builds from a Dockerfile.
const Scheme = "dockerfile://"

// DefaultFile is the Dockerfile's name when the reference names none, as
// docker build looks for it.
const DefaultFile = "Dockerfile"

// Bounds on what a reference may carry; far beyond any real build.
const (
	maxLen     = 4096
	maxArgs    = 64
	maxPathLen = 512
)

// ErrInvalid marks a dockerfile:// image knit refuses to build.
var ErrInvalid = errors.New("invalid dockerfile:// image")

// Ref is a dockerfile:// image, checked.
type Ref struct {
	// Dir is the build context: a clean slash path relative to the
	// repository's root, "." for the root itself.
	Dir string
	// File is the Dockerfile, relative to Dir (DefaultFile unless named).
	File string
	// Target is the stage to build; "" builds the last one.
	Target string
	// Args are the build arguments, by name.
	Args map[string]string
}

// IsRef reports whether image is a dockerfile:// image.
func IsRef(image string) bool { return strings.HasPrefix(image, Scheme) }

// Parse checks image and returns what it asks to build. The error wraps
// ErrInvalid and says what is wrong.
func Parse(image string) (Ref, error) {
	rest, ok := strings.CutPrefix(image, Scheme)
	if !ok {
		return Ref{}, fmt.Errorf("%w %q: it does not start with %s", ErrInvalid, image, Scheme)
	}
	r, err := parse(rest)
	if err != nil {
		return Ref{}, fmt.Errorf("%w %q: %w", ErrInvalid, image, err)
	}
	return r, nil
}

func parse(rest string) (Ref, error) {
	switch {
	case len(rest) > maxLen:
		return Ref{}, fmt.Errorf("longer than %d bytes", maxLen)
	case !utf8.ValidString(rest):
		return Ref{}, errors.New("not valid UTF-8")
	}
	dir, query, _ := strings.Cut(rest, "?")
	r := Ref{File: DefaultFile}
	var err error
	if r.Dir, err = contextDir(dir); err != nil {
		return Ref{}, err
	}
	values, err := url.ParseQuery(query)
	if err != nil {
		return Ref{}, fmt.Errorf("the settings after '?': %w", err)
	}
	for key, vs := range values {
		if err := r.set(key, vs); err != nil {
			return Ref{}, err
		}
	}
	return r, nil
}

// contextDir is the build context of a reference: "./dir/sub" or "." (or
// "./"), clean, inside the repository.
func contextDir(dir string) (string, error) {
	switch dir {
	case ".", "./":
		return ".", nil
	case "":
		return "", errors.New("the directory is empty (use ./ for the repository's root)")
	}
	rel, ok := strings.CutPrefix(dir, "./")
	if !ok {
		return "", fmt.Errorf("the directory %q must start with ./ (a directory of the repository)", dir)
	}
	if err := checkPath(rel); err != nil {
		return "", fmt.Errorf("the directory %q: %w", dir, err)
	}
	return rel, nil
}

// set applies one query setting.
func (r *Ref) set(key string, vs []string) error {
	switch key {
	case "target":
		if len(vs) != 1 || !plainName(vs[0]) {
			return fmt.Errorf("target %q: want one stage name (letters, digits, '-', '_', '.')", strings.Join(vs, ","))
		}
		r.Target = vs[0]
	case "file":
		if len(vs) != 1 {
			return errors.New("file is given more than once")
		}
		if err := checkPath(vs[0]); err != nil {
			return fmt.Errorf("file %q: %w (a path inside the directory)", vs[0], err)
		}
		r.File = vs[0]
	case "build-arg":
		return r.setArgs(vs)
	default:
		return fmt.Errorf("unknown setting %q (known: target, file, build-arg)", key)
	}
	return nil
}

func (r *Ref) setArgs(vs []string) error {
	if len(vs) > maxArgs {
		return fmt.Errorf("more than %d build-arg settings", maxArgs)
	}
	r.Args = make(map[string]string, len(vs))
	for _, v := range vs {
		name, value, ok := strings.Cut(v, "=")
		if !ok || !argName(name) {
			return fmt.Errorf("build-arg %q: want NAME=value, NAME a letter or '_' then letters, digits or '_'", v)
		}
		if _, dup := r.Args[name]; dup {
			return fmt.Errorf("build-arg %s is given twice", name)
		}
		r.Args[name] = value
	}
	return nil
}

// String is the canonical spelling of r: equal builds spell alike, so the
// build key can hash it.
func (r Ref) String() string {
	dir := "./" + r.Dir
	if r.Dir == "." {
		dir = "./"
	}
	q := url.Values{}
	if r.File != DefaultFile && r.File != "" {
		q.Set("file", r.File)
	}
	if r.Target != "" {
		q.Set("target", r.Target)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Args)) {
		q.Add("build-arg", name+"="+r.Args[name])
	}
	if len(q) == 0 {
		return Scheme + dir
	}
	return Scheme + dir + "?" + q.Encode()
}

// DockerfilePath is the Dockerfile's path relative to the repository.
func (r Ref) DockerfilePath() string { return path.Join(r.Dir, r.File) }

// Name is what the image is called in the registry: the context
// directory's last element, the repository's name for its root.
func (r Ref) Name(repository string) string {
	if r.Dir == "." {
		return strings.ToLower(repository)
	}
	return strings.ToLower(path.Base(r.Dir))
}

// checkPath checks a relative slash path as kopath checks a package's
// directory, with a bound on its length and no leading slash.
func checkPath(p string) error {
	switch {
	case len(p) > maxPathLen:
		return fmt.Errorf("longer than %d bytes", maxPathLen)
	case strings.HasPrefix(p, "/"):
		return errors.New("absolute path")
	}
	return kopath.CheckPath(p)
}

func plainName(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '-' || s[0] == '.' {
		return false
	}
	for _, c := range s {
		if !nameRune(c) {
			return false
		}
	}
	return true
}

func argName(s string) bool {
	if s == "" || len(s) > 128 || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for _, c := range s {
		if c != '_' && !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

func nameRune(c rune) bool {
	return c == '-' || c == '.' || c == '_' ||
		'0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
