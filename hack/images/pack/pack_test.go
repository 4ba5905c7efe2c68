package pack

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// git is the dynamically linked program the tests pack, as the git server
// image does.
const git = "/usr/bin/git"

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(git); err != nil {
		t.Skipf("no %s on this machine: %v", git, err)
	}
}

// testSpec packs a small file, git with its libraries and a CA bundle.
func testSpec(t *testing.T) Spec {
	t.Helper()
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	if err := os.WriteFile(app, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return Spec{
		Files:      []File{{Src: app, Dest: "/app"}, {Src: git, Dest: git}},
		Entrypoint: []string{"/app"},
		Env:        []string{"PATH=/usr/bin"},
		CABundle:   ca,
	}
}

// layerEntries reads the image's single layer.
func layerEntries(t *testing.T, img v1.Image) map[string]tarEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	entries := map[string]tarEntry{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries["/"+strings.TrimSuffix(h.Name, "/")] = tarEntry{h, data}
	}
	return entries
}

func TestImageLayer(t *testing.T) {
	needGit(t)
	img, err := Image(testSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	entries := layerEntries(t, img)

	libs, err := Closure(git)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) == 0 {
		t.Fatalf("Closure(%s) is empty; want its libraries and loader", git)
	}
	wantFiles := append([]string{"/app", git, "/etc/passwd", "/etc/group", CABundlePath}, libs...)
	for _, p := range wantFiles {
		e, ok := entries[p]
		if !ok {
			t.Errorf("layer has no %s", p)
			continue
		}
		if e.hdr.Typeflag != tar.TypeReg && e.hdr.Typeflag != tar.TypeLink {
			t.Errorf("%s: type %q, want a regular file", p, e.hdr.Typeflag)
		}
		if e.hdr.Uid != 0 || e.hdr.Gid != 0 || e.hdr.ModTime.Unix() != 0 {
			t.Errorf("%s: owner %d:%d mtime %v, want 0:0 at the epoch", p, e.hdr.Uid, e.hdr.Gid, e.hdr.ModTime)
		}
	}
	if got := entries["/app"]; got.hdr.Mode != 0o755 || string(got.data) != "#!/bin/true\n" {
		t.Errorf("/app: mode %o content %q", got.hdr.Mode, got.data)
	}
	if got := entries[CABundlePath]; got.hdr.Mode != 0o600 || !bytes.HasPrefix(got.data, []byte("-----BEGIN")) {
		t.Errorf("%s: mode %o content %q", CABundlePath, got.hdr.Mode, got.data)
	}
	if !strings.Contains(string(entries["/etc/passwd"].data), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user 65532:\n%s", entries["/etc/passwd"].data)
	}
	if !strings.Contains(string(entries["/etc/group"].data), "nonroot:x:65532:") {
		t.Errorf("/etc/group has no nonroot group 65532:\n%s", entries["/etc/group"].data)
	}
	if tmp := entries["/tmp"]; tmp.hdr == nil || tmp.hdr.Typeflag != tar.TypeDir || tmp.hdr.Mode != 0o1777 {
		t.Errorf("/tmp: %+v, want a directory with mode 1777", tmp.hdr)
	}
	if home := entries["/home/nonroot"]; home.hdr == nil || home.hdr.Uid != NonRootUID {
		t.Errorf("/home/nonroot: %+v, want a directory owned by %d", home.hdr, NonRootUID)
	}
	// Parents come before children, so an unpacker never creates a
	// directory with default permissions first.
	layers, _ := img.Layers()
	rc, _ := layers[0].Uncompressed()
	defer rc.Close()
	var order []string
	tr := tar.NewReader(rc)
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		order = append(order, h.Name)
	}
	if !slices.IsSorted(order) {
		t.Errorf("layer entries are not in path order: %q", order)
	}

	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if c := cfg.Config; c.User != "65532:65532" || c.WorkingDir != "/" ||
		!slices.Equal(c.Entrypoint, []string{"/app"}) || !slices.Equal(c.Env, []string{"PATH=/usr/bin"}) {
		t.Errorf("config: user %q workdir %q entrypoint %q env %q", c.User, c.WorkingDir, c.Entrypoint, c.Env)
	}
}

func TestImageIsReproducible(t *testing.T) {
	needGit(t)
	spec := testSpec(t)
	var digests []v1.Hash
	for range 2 {
		img, err := Image(spec)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	if digests[0] != digests[1] {
		t.Errorf("two packs of the same spec: %s and %s", digests[0], digests[1])
	}
}

// TestIdenticalFilesAreHardLinks packs git twice under two names, as the
// git server image does with /usr/bin/git and /usr/lib/git-core/git.
func TestIdenticalFilesAreHardLinks(t *testing.T) {
	needGit(t)
	img, err := Image(Spec{
		Files:      []File{{Src: git, Dest: "/usr/bin/git"}, {Src: git, Dest: "/usr/lib/git-core/git"}},
		Entrypoint: []string{"/usr/bin/git"},
	})
	if err != nil {
		t.Fatal(err)
	}
	entries := layerEntries(t, img)
	first, second := entries["/usr/bin/git"], entries["/usr/lib/git-core/git"]
	if first.hdr.Typeflag != tar.TypeReg || second.hdr.Typeflag != tar.TypeLink || second.hdr.Linkname != "usr/bin/git" {
		t.Errorf("got %q and %q -> %q, want a file and a hard link to usr/bin/git",
			first.hdr.Typeflag, second.hdr.Typeflag, second.hdr.Linkname)
	}
}

// TestClosureRuns unpacks the layer and runs git --version chrooted into
// it: the layer is a complete root file system for git, or the loader
// says which library is missing.
func TestClosureRuns(t *testing.T) {
	needGit(t)
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	img, err := Image(Spec{Files: []File{{Src: git, Dest: git}}, Entrypoint: []string{git}})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for name, e := range layerEntries(t, img) {
		p := filepath.Join(root, name)
		switch e.hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, e.data, os.FileMode(e.hdr.Mode).Perm())
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The runtime provides /dev; git opens /dev/null.
	if err := os.Mkdir(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev/null"), syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod /dev/null: %v", err)
	}
	cmd := exec.Command(git, "--version")
	cmd.Env = []string{"PATH=/usr/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "git version ") {
		t.Fatalf("chroot %s %s --version: %v\n%s", root, git, err, out)
	}
}

// TestTarball writes the docker save tarball ctr imports and reads it back.
// A docker save tarball has no manifest of its own (the reader, like ctr,
// makes one), so the config and the layer are what must survive.
func TestTarball(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	if err := os.WriteFile(bin, []byte("static"), 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := Image(Spec{Files: []File{{Src: bin, Dest: "/hello"}}, Entrypoint: []string{"/hello"}})
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("knit.local/examples/hello:latest")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "hello.tar")
	if err := tarball.WriteToFile(out, tag, img); err != nil {
		t.Fatal(err)
	}
	back, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	for _, digest := range []func(v1.Image) (v1.Hash, error){
		v1.Image.ConfigName,
		func(i v1.Image) (v1.Hash, error) {
			ls, err := i.Layers()
			if err != nil || len(ls) != 1 {
				return v1.Hash{}, fmt.Errorf("layers: %d, %v", len(ls), err)
			}
			return ls[0].DiffID()
		},
	} {
		want, err := digest(img)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := digest(back); err != nil || got != want {
			t.Errorf("read back %s (%v), want %s", got, err, want)
		}
	}
}

func TestConflictingFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("a"), 0o644)
	os.WriteFile(b, []byte("b"), 0o644)
	_, err := Layer(Spec{Files: []File{{Src: a, Dest: "/x"}, {Src: b, Dest: "/x"}}, Entrypoint: []string{"/x"}})
	if err == nil || !strings.Contains(err.Error(), "conflicts") {
		t.Errorf("two files at /x: err %v, want a conflict", err)
	}
	_, err = Layer(Spec{Files: []File{{Src: a, Dest: "/x"}, {Src: a, Dest: "/x"}}, Entrypoint: []string{"/x"}})
	if err != nil {
		t.Errorf("the same file twice at /x: %v", err)
	}
}

func TestParseLdd(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      []string
		err       string
	}{{
		name: "dynamic",
		out: "\tlinux-vdso.so.1 (0x00007ffd1e3f5000)\n" +
			"\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f00f26dd000)\n" +
			"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f00f201e000)\n" +
			"\t/lib64/ld-linux-x86-64.so.2 (0x00007f00f27a9000)\n",
		want: []string{"/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"},
	}, {
		name: "static",
		out:  "\tstatically linked\n",
	}, {
		name: "missing",
		out:  "\tlibfoo.so.1 => not found\n",
		err:  "libfoo.so.1 not found",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLdd("prog", []byte(tc.out))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestClosureOfStaticFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "data")
	os.WriteFile(f, []byte("not ELF"), 0o644)
	libs, err := Closure(f)
	if err != nil || libs != nil {
		t.Errorf("Closure of a data file: %q, %v; want nothing", libs, err)
	}
}
