package kobuild

import (
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sources is a fake file system for buildKey.
type sources map[string]string

func (s sources) open(name string) (io.ReadCloser, error) {
	content, ok := s[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return io.NopCloser(strings.NewReader(content)), nil
}

func TestBuildKey(t *testing.T) {
	env := map[string]string{"GOVERSION": "go1.26.8", "GOOS": "linux", "GOARCH": "amd64"}
	mainMod := &listedModule{Path: "example.com/app", GoMod: "/src/app/go.mod"}
	pkgs := func() []listedPackage {
		return []listedPackage{
			{ImportPath: "fmt", Standard: true},
			{ImportPath: "k8s.io/apimachinery/pkg/types", Module: &listedModule{Path: "k8s.io/apimachinery", Version: "v0.37.0", Sum: "h1:abc"}},
			{ImportPath: "example.com/lib", Module: &listedModule{Path: "example.com/lib", Version: "v1.0.0", Replace: &listedModule{Path: "../lib", GoMod: "/src/lib/go.mod"}},
				Dir: "/src/lib", sourceFiles: sourceFiles{GoFiles: []string{"lib.go"}}},
			{ImportPath: "example.com/app", Name: "main", Module: mainMod, Dir: "/src/app",
				sourceFiles: sourceFiles{GoFiles: []string{"main.go"}, EmbedFiles: []string{"static/index.html"}}},
		}
	}
	files := sources{
		"/src/app/main.go": "package main", "/src/app/static/index.html": "<h1>hi</h1>", "/src/app/go.mod": "module example.com/app",
		"/src/lib/lib.go": "package lib", "/src/lib/go.mod": "module example.com/lib",
	}
	key := func(env map[string]string, pkgs []listedPackage, files sources) string {
		t.Helper()
		k, err := buildKey(env, pkgs, files.open)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	base := key(env, pkgs(), files)
	if again := key(env, pkgs(), files); again != base {
		t.Fatalf("same inputs, different keys: %s, %s", base, again)
	}

	edit := func(name, content string) sources {
		out := sources{}
		for k, v := range files {
			out[k] = v
		}
		out[name] = content
		return out
	}
	otherVersion := pkgs()
	otherVersion[1].Module.Version = "v0.37.1"
	renamed := pkgs()
	renamed[3].ImportPath = "example.com/app2"
	for name, k := range map[string]string{
		"a main-module source":     key(env, pkgs(), edit("/src/app/main.go", "package main // changed")),
		"an embedded file":         key(env, pkgs(), edit("/src/app/static/index.html", "<h1>bye</h1>")),
		"a directory-replaced dep": key(env, pkgs(), edit("/src/lib/lib.go", "package lib // changed")),
		"go.mod (e.g. godebug)":    key(env, pkgs(), edit("/src/app/go.mod", "module example.com/app\ngodebug x=1")),
		"a module version":         key(env, otherVersion, files),
		"the toolchain":            key(map[string]string{"GOVERSION": "go1.27.0", "GOOS": "linux", "GOARCH": "amd64"}, pkgs(), files),
		"the target's import path": key(env, renamed, files),
	} {
		if k == base {
			t.Errorf("changing %s did not change the key", name)
		}
	}

	// Module-cache content is immutable: it is keyed by version, never read.
	if _, err := buildKey(env, pkgs()[:2], sources{}.open); err != nil {
		t.Errorf("module cache files were read: %v", err)
	}
	if _, err := buildKey(env, pkgs(), sources{}.open); err == nil {
		t.Errorf("a missing local source went unnoticed")
	}
}

func TestBinaryName(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/knitops/knit/examples/helloworld": "helloworld",
		"example.com/tool/v2":                         "tool",
		"example.com/v2":                              "example.com", // as go install names it
		"./cmd/app/":                                  "app",
	} {
		if got := binaryName(in); got != want {
			t.Errorf("binaryName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorLines(t *testing.T) {
	out := `go: downloading example.com/dep v1.0.0
internal/abi
example.com/app/internal/store
# example.com/app
./main.go:6:2: undefined: undefinedFunction
./main.go:7:2: declared and not used: x
`
	want := []string{"# example.com/app", "./main.go:6:2: undefined: undefinedFunction", "./main.go:7:2: declared and not used: x"}
	if diff := cmp.Diff(want, errorLines(out)); diff != "" {
		t.Errorf("error lines (-want +got):\n%s", diff)
	}
}

func TestInMainModule(t *testing.T) {
	env := &goEnv{mainModules: []string{"github.com/knitops/knit"}}
	for pkg, want := range map[string]bool{
		"./testdata/httpserver":   true,
		"../other":                true,
		".":                       true,
		"github.com/knitops/knit": true,
		"github.com/knitops/knit/examples/helloworld": true,
		"github.com/knitops/knitting/cmd":             false,
		"golang.org/x/tools/cmd/stringer":             false,
	} {
		if got := env.inMainModule(pkg); got != want {
			t.Errorf("inMainModule(%q) = %v, want %v", pkg, got, want)
		}
	}
}
