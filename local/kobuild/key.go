package kobuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
)

// The build cache key.
//
// A ko:// image is cached under a key computed from what `go list -deps`
// reports, without compiling anything: the go toolchain and target
// (GOVERSION, GOOS, GOARCH, GOFLAGS, …), the import path, and for every
// package in the binary
//
//   - standard library: its import path (the toolchain version covers it);
//   - in the module cache: its module path@version and go.sum hash, which
//     name immutable content;
//   - anywhere else (the main module, a replace to a directory): the
//     SHA-256 of each of its source files — Go, cgo, assembly, syso and
//     //go:embed files — and of its module's go.mod.
//
// Why this and not Go's build ID: the build ID of a binary is only known
// after linking it, and a package's build ID after compiling it; this key
// costs one `go list` and hashing the local sources (~100–300 ms), so a
// rebuild when nothing changed is nearly free, and a real build streams
// its own progress. The build runs with -trimpath and -buildvcs=false so
// the binary is a function of the key alone (it does not embed the
// checkout's path or commit), as ko builds it.

// listedPackage is the part of `go list -json` the key needs.
type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Standard   bool
	Module     *listedModule
	sourceFiles
}

type listedModule struct {
	Path    string
	Version string
	Sum     string
	GoMod   string
	Replace *listedModule
}

// sourceFiles are the file lists of a package that go into its build, as
// `go list` names them (relative to the package's Dir).
type sourceFiles struct {
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles []string
	SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles                      []string
}

// listFields is the -json= argument that asks go list for listedPackage.
const listFields = "ImportPath,Name,Dir,Standard,Module,GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles,SFiles,SwigFiles,SwigCXXFiles,SysoFiles,EmbedFiles"

func (f sourceFiles) all() []string {
	return slices.Concat(f.GoFiles, f.CgoFiles, f.CFiles, f.CXXFiles, f.MFiles, f.HFiles, f.FFiles, f.SFiles,
		f.SwigFiles, f.SwigCXXFiles, f.SysoFiles, f.EmbedFiles)
}

// version is the immutable module version a package comes from, or ""
// when its files are local and must be hashed.
func (m *listedModule) version() string {
	switch {
	case m == nil:
		return ""
	case m.Replace != nil:
		return m.Replace.version()
	case m.Version != "":
		return m.Path + "@" + m.Version + " " + m.Sum
	}
	return ""
}

// buildKey is the cache key of the binary built from pkgs (the output of
// `go list -deps`, the target last) with the toolchain settings in goenv.
// open reads a source file.
func buildKey(goenv map[string]string, pkgs []listedPackage, open func(string) (io.ReadCloser, error)) (string, error) {
	if len(pkgs) == 0 {
		return "", fmt.Errorf("no packages")
	}
	h := sha256.New()
	fmt.Fprintln(h, "knit build key v1")
	for _, k := range slices.Sorted(maps.Keys(goenv)) {
		fmt.Fprintf(h, "env %s=%s\n", k, goenv[k])
	}
	fmt.Fprintf(h, "target %s\n", pkgs[len(pkgs)-1].ImportPath)
	goMods := map[string]bool{}
	for _, p := range pkgs {
		if p.Standard {
			fmt.Fprintf(h, "std %s\n", p.ImportPath)
			continue
		}
		if v := p.Module.version(); v != "" {
			fmt.Fprintf(h, "module %s %s\n", p.ImportPath, v)
			continue
		}
		fmt.Fprintf(h, "local %s\n", p.ImportPath)
		for _, name := range p.all() {
			if err := hashFile(h, name, filepath.Join(p.Dir, name), open); err != nil {
				return "", err
			}
		}
		if p.Module != nil && p.Module.GoMod != "" && !goMods[p.Module.GoMod] {
			goMods[p.Module.GoMod] = true
			if err := hashFile(h, "go.mod", p.Module.GoMod, open); err != nil {
				return "", err
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h io.Writer, name, file string, open func(string) (io.ReadCloser, error)) error {
	f, err := open(file)
	if err != nil {
		return fmt.Errorf("hash sources: %w", err)
	}
	defer f.Close()
	fh := sha256.New()
	if _, err := io.Copy(fh, f); err != nil {
		return fmt.Errorf("hash sources: %w", err)
	}
	fmt.Fprintf(h, "file %s %x\n", name, fh.Sum(nil))
	return nil
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// binaryName is what go install would call the program: the last element
// of its import path, skipping a major-version suffix.
func binaryName(importPath string) string {
	dir, base := path.Split(path.Clean(importPath))
	if majorVersion.MatchString(base) && dir != "" {
		base = path.Base(dir)
	}
	return base
}
