package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

func TestParseSimulation(t *testing.T) {
	out := `NOTE: This is only a simulation!
Reading package lists...
The following NEW packages will be installed:
  libc6 media-types
Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64]) []
Inst media-types (10.0.0 Debian:12.15/oldstable [all])
Inst libkrb5-3 (1.20.1-2+deb12u5 Debian:12.15/oldstable, Debian-Security:12/oldstable-security [amd64])
Inst libattr1 (1:2.5.1-4 Debian:12.15/oldstable [amd64])
Inst foo [1.0] (1.1 Debian:12/stable [amd64])
Conf libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64])
`
	got, err := parseSimulation([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []pkg{
		{"libc6", "2.36-9+deb12u14", "amd64"},
		{"media-types", "10.0.0", "all"},
		{"libkrb5-3", "1.20.1-2+deb12u5", "amd64"},
		{"libattr1", "1:2.5.1-4", "amd64"},
		{"foo", "1.1", "amd64"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseSimulation =\n%v\nwant\n%v", got, want)
	}
	for _, bad := range []string{"Inst libc6", "Inst libc6 ()", "Inst  (1.0 [amd64])"} {
		if _, err := parseSimulation([]byte(bad)); err == nil {
			t.Errorf("parseSimulation(%q) succeeded", bad)
		}
	}
}

func TestParsePrintURIs(t *testing.T) {
	out := `'http://deb.debian.org/debian/pool/main/a/attr/libattr1_2.5.1-4_amd64.deb' libattr1_1%3a2.5.1-4_amd64.deb 22164 SHA256:C4945123d66d
'http://deb.debian.org/debian-security/pool/updates/main/c/ca-certificates/ca-certificates_20250419%7edeb12u2_all.deb' ca-certificates_20250419~deb12u2_all.deb 160948 SHA256:b9f76b52

`
	got, err := parsePrintURIs([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []debFile{
		{Pkg: pkg{"libattr1", "1:2.5.1-4", "amd64"}, URL: "http://deb.debian.org/debian/pool/main/a/attr/libattr1_2.5.1-4_amd64.deb",
			File: "libattr1_1%3a2.5.1-4_amd64.deb", Size: 22164, SHA256: "c4945123d66d"},
		{Pkg: pkg{"ca-certificates", "20250419~deb12u2", "all"}, URL: "http://deb.debian.org/debian-security/pool/updates/main/c/ca-certificates/ca-certificates_20250419%7edeb12u2_all.deb",
			File: "ca-certificates_20250419~deb12u2_all.deb", Size: 160948, SHA256: "b9f76b52"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsePrintURIs =\n%+v\nwant\n%+v", got, want)
	}
	for _, bad := range []string{
		"'u' f_1_all.deb 12",                // no hash
		"'u' f_1_all.deb twelve SHA256:ab",  // size
		"u f_1_all.deb 12 SHA256:ab",        // URL unquoted
		"'u' notadeb.txt 12 SHA256:ab",      // file name
		"'u' a/../f_1_all.deb 12 SHA256:ab", // a path
	} {
		if _, err := parsePrintURIs([]byte(bad)); err == nil {
			t.Errorf("parsePrintURIs(%q) succeeded", bad)
		}
	}
}

func TestParseDebFileName(t *testing.T) {
	for file, want := range map[string]pkg{
		"zlib1g_1%3a1.2.13.dfsg-1_amd64.deb":       {"zlib1g", "1:1.2.13.dfsg-1", "amd64"},
		"python3.11_3.11.2-6+deb12u9_amd64.deb":    {"python3.11", "3.11.2-6+deb12u9", "amd64"},
		"node-acorn_8.8.1+ds+~cs25.17.7-2_all.deb": {"node-acorn", "8.8.1+ds+~cs25.17.7-2", "all"},
	} {
		if got, err := parseDebFileName(file); err != nil || got != want {
			t.Errorf("parseDebFileName(%q) = %v, %v; want %v", file, got, err, want)
		}
	}
	for _, bad := range []string{"a_1.deb", "a_1_amd64", "_1_amd64.deb", "a_b_c_d.deb"} {
		if _, err := parseDebFileName(bad); err == nil {
			t.Errorf("parseDebFileName(%q) succeeded", bad)
		}
	}
}

func TestOSReleaseAndPin(t *testing.T) {
	m := parseOSRelease([]byte("# comment\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID='debian'\n"))
	if m["VERSION_CODENAME"] != "bookworm" || m["PRETTY_NAME"] != "Debian GNU/Linux 12 (bookworm)" || m["ID"] != "debian" {
		t.Errorf("parseOSRelease = %v", m)
	}
	prefs := pinDebian("bookworm")
	for _, want := range []string{"Pin: release o=Debian,n=bookworm\nPin-Priority: 500",
		"n=bookworm-security\n", "n=bookworm-updates\n", "Pin: release *\nPin-Priority: -1\n"} {
		if !strings.Contains(prefs, want) {
			t.Errorf("pinDebian lacks %q:\n%s", want, prefs)
		}
	}
	// apt takes the first record that matches: every Debian one before
	// the catch-all.
	if strings.Index(prefs, "Pin: release *") < strings.LastIndex(prefs, "o=Debian") {
		t.Errorf("the catch-all comes before a Debian pin:\n%s", prefs)
	}
}

func TestCanonicalSkipRelink(t *testing.T) {
	for in, want := range map[string]string{
		"./":                      "",
		".":                       "",
		"./bin/sh":                "usr/bin/sh",
		"./lib64/ld.so":           "usr/lib64/ld.so",
		"./lib/x86_64-linux-gnu/": "usr/lib/x86_64-linux-gnu",
		"./usr/bin/python3":       "usr/bin/python3",
		"/etc/passwd":             "etc/passwd",
		"./binaries/x":            "binaries/x",
		"./a/../bin/x":            "usr/bin/x",
		"../../etc":               "etc",
	} {
		if got := canonical(in); got != want {
			t.Errorf("canonical(%q) = %q, want %q", in, got, want)
		}
	}
	for p, want := range map[string]bool{
		"usr/share/doc":                   true,
		"usr/share/doc/dash":              true,
		"usr/share/doc/dash/changelog.gz": true,
		"usr/share/doc/dash/copyright":    false,
		"usr/share/doc/a/b/copyright":     true,
		"usr/share/man/man1/ls.1.gz":      true,
		"usr/share/locale/de/x.mo":        true,
		"usr/share/docs":                  false,
		"usr/share/nodejs/acorn":          false,
		"usr/lib/python3.11/doctest.py":   false,
	} {
		if got := skip(p); got != want {
			t.Errorf("skip(%q) = %v, want %v", p, got, want)
		}
	}
	for _, c := range []struct{ orig, moved, target, want string }{
		{"bin/sh", "usr/bin/sh", "dash", "dash"},
		{"bin/x", "usr/bin/x", "../lib/y", "../lib/y"},
		{"lib/x86_64-linux-gnu/libz.so.1", "usr/lib/x86_64-linux-gnu/libz.so.1", "libz.so.1.2.13", "libz.so.1.2.13"},
		{"lib/a", "usr/lib/a", "../usr/share/b", "../share/b"},
		{"lib64/ld.so", "usr/lib64/ld.so", "/lib/x86_64-linux-gnu/ld.so", "/lib/x86_64-linux-gnu/ld.so"},
		{"usr/bin/nodejs", "usr/bin/nodejs", "node", "node"},
		{"etc/os-release", "etc/os-release", "../usr/lib/os-release", "../usr/lib/os-release"},
	} {
		if got := relink(c.orig, c.moved, c.target); got != c.want {
			t.Errorf("relink(%q, %q, %q) = %q, want %q", c.orig, c.moved, c.target, got, c.want)
		}
	}
}

// debTarOf is a package's file system tree, as dpkg-deb --fsys-tarfile
// writes one.
func debTarOf(t *testing.T, entries ...*tar.Header) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		var body []byte
		if h.Typeflag == tar.TypeReg {
			body = []byte("content of " + h.Name)
			h.Size = int64(len(body))
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		h.ModTime = time.Date(2023, 1, 5, 0, 0, 0, 0, time.UTC)
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

func dir(name string) *tar.Header { return &tar.Header{Name: name, Typeflag: tar.TypeDir, Mode: 0o755} }
func reg(name string) *tar.Header { return &tar.Header{Name: name, Typeflag: tar.TypeReg} }
func sym(name, to string) *tar.Header {
	return &tar.Header{Name: name, Typeflag: tar.TypeSymlink, Linkname: to, Mode: 0o777}
}

func TestAddTar(t *testing.T) {
	tr := newTree()
	dash := debTarOf(t, dir("./"), dir("./bin/"), &tar.Header{Name: "./bin/dash", Typeflag: tar.TypeReg, Mode: 0o755},
		sym("./bin/sh", "dash"), dir("./usr/share/doc/dash/"), reg("./usr/share/doc/dash/copyright"),
		reg("./usr/share/doc/dash/changelog.gz"), reg("./usr/share/man/man1/dash.1.gz"))
	if err := tr.addTar(dash); err != nil {
		t.Fatal(err)
	}
	other := debTarOf(t, dir("./"), dir("./usr/"), &tar.Header{Name: "./usr/", Typeflag: tar.TypeDir, Mode: 0o700},
		&tar.Header{Name: "./var/local/", Typeflag: tar.TypeDir, Mode: 0o2775, Gid: 50},
		reg("./usr/bin/perl"), &tar.Header{Name: "./usr/bin/perl5", Typeflag: tar.TypeLink, Linkname: "./usr/bin/perl"},
		&tar.Header{Name: "./bin/dash", Typeflag: tar.TypeReg, Mode: 0o700})
	if err := tr.addTar(other); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for p, e := range tr.files {
		got[p] = string(e.typ) + " " + e.link + " " + string(e.data)
	}
	want := map[string]string{
		"usr":                          "5  ",
		"usr/bin":                      "5  ",
		"usr/bin/dash":                 "0  content of ./bin/dash",
		"usr/bin/sh":                   "2 dash ",
		"usr/share/doc/dash/copyright": "0  content of ./usr/share/doc/dash/copyright",
		"var/local":                    "5  ",
		"usr/bin/perl":                 "0  content of ./usr/bin/perl",
		"usr/bin/perl5":                "0  content of ./usr/bin/perl",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tree =\n%v\nwant\n%v", got, want)
	}
	if e := tr.files["usr"]; e.mode != 0o755 {
		t.Errorf("usr's mode %o: the first package's directory should stay", e.mode)
	}
	if e := tr.files["var/local"]; e.mode != 0o2775 || e.gid != 50 {
		t.Errorf("var/local = %o %d, want the package's mode and group", e.mode, e.gid)
	}
	if len(tr.notes) != 1 || !strings.Contains(tr.notes[0], "usr/bin/dash") {
		t.Errorf("notes = %q, want one for usr/bin/dash", tr.notes)
	}
	bad := debTarOf(t, &tar.Header{Name: "./usr/bin/x", Typeflag: tar.TypeLink, Linkname: "./usr/bin/none"})
	if err := newTree().addTar(bad); err == nil {
		t.Error("a hard link to nothing was added")
	}
	if err := tr.put("usr/bin", &entry{typ: tar.TypeSymlink, link: "x"}); err == nil {
		t.Error("a directory with files became a link")
	}
}

func TestWriteTarIsSortedAndDeterministic(t *testing.T) {
	mk := func(order []string) []byte {
		tr := newTree()
		for _, p := range order {
			switch p {
			case "usr/bin/sh":
				tr.files[p] = &entry{typ: tar.TypeSymlink, mode: 0o777, link: "dash"}
			default:
				tr.files[p] = &entry{typ: tar.TypeReg, mode: 0o755, uid: 1, gid: 2, data: []byte(p)}
			}
		}
		var buf bytes.Buffer
		if err := tr.writeTar(&buf, epoch); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	a := mk([]string{"usr/bin/sh", "etc/passwd", "usr/bin/dash", "usr-x"})
	b := mk([]string{"usr-x", "usr/bin/dash", "etc/passwd", "usr/bin/sh"})
	if !bytes.Equal(a, b) {
		t.Fatal("the same tree gave different tars")
	}
	var names []string
	r := tar.NewReader(bytes.NewReader(a))
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(epoch) || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mtime %v, owner names %q %q", h.Name, h.ModTime, h.Uname, h.Gname)
		}
		if h.Name == "usr/bin/dash" && (h.Uid != 1 || h.Gid != 2 || h.Mode != 0o755) {
			t.Errorf("usr/bin/dash: %d:%d %o, want the package's owner and mode", h.Uid, h.Gid, h.Mode)
		}
	}
	want := []string{"etc/", "etc/passwd", "usr/", "usr-x", "usr/bin/", "usr/bin/dash", "usr/bin/sh"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("entries %q, want %q", names, want)
	}
	tr := newTree()
	tr.files["a"] = &entry{typ: tar.TypeReg}
	tr.files["a/b"] = &entry{typ: tar.TypeReg}
	if err := tr.writeTar(io.Discard, epoch); err == nil {
		t.Error("a file under a file was written")
	}
}

func TestConfigure(t *testing.T) {
	tr := newTree()
	for p, data := range map[string]string{
		"usr/share/base-files/profile":          "profile",
		"usr/share/debianutils/shells":          "# /etc/shells: valid login shells\n/bin/sh\n",
		"usr/share/debianutils/shells.d/dash":   "/bin/dash\n",
		"usr/bin/mawk":                          "mawk",
		"usr/lib64/ld-linux-x86-64.so.2":        "ld",
		"usr/lib/python3.11/os.py":              "os",
		"usr/share/readline/inputrc":            "inputrc",
		"etc/dpkg/origins/debian":               "Vendor: Debian",
		"usr/lib/x86_64-linux-gnu/libc.so.6":    "libc",
		"usr/share/ca-certificates/mozilla/.kp": "not a certificate",
	} {
		tr.files[p] = &entry{typ: tar.TypeReg, mode: 0o644, data: []byte(data)}
	}
	tr.files["var/run"] = &entry{typ: tar.TypeDir, mode: 0o755}
	if err := tr.addParents(); err != nil {
		t.Fatal(err)
	}
	certs := map[string][]byte{"mozilla/B.crt": []byte("B"), "mozilla/A.crt": []byte("A\n")}
	if err := configure(tr, certs); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"etc/profile":                       "profile",
		"etc/inputrc":                       "inputrc",
		"etc/passwd":                        passwd,
		"etc/group":                         group,
		"etc/shells":                        "# /etc/shells: valid login shells\n/bin/sh\n/usr/bin/sh\n/bin/dash\n/usr/bin/dash\n",
		"etc/ssl/certs/ca-certificates.crt": "A\nB\n",
	}
	for p, want := range files {
		if e := tr.files[p]; e == nil || string(e.data) != want {
			t.Errorf("%s = %+v, want %q", p, e, want)
		}
	}
	links := map[string]string{
		"bin": "usr/bin", "lib": "usr/lib", "lib64": "usr/lib64",
		"usr/bin/awk": "mawk", "var/run": "/run", "etc/dpkg/origins/default": "debian",
		"usr/lib/ssl/cert.pem": "/etc/ssl/certs/ca-certificates.crt",
	}
	for p, want := range links {
		if e := tr.files[p]; e == nil || e.typ != tar.TypeSymlink || e.link != want {
			t.Errorf("%s = %+v, want a link to %s", p, e, want)
		}
	}
	for _, p := range []string{"usr/bin/which", "sbin", "libx32", "lib32"} {
		if _, ok := tr.files[p]; ok {
			t.Errorf("%s made, with nothing to point to", p)
		}
	}
	dirs := map[string][3]int64{"tmp": {0o1777, 0, 0}, "root": {0o700, 0, 0}, "home/nonroot": {0o700, 65532, 65532},
		"usr/local/lib/python3.11/dist-packages": {0o755, 0, 0}, "run/lock": {0o1777, 0, 0}}
	for p, want := range dirs {
		if e := tr.files[p]; e == nil || e.typ != tar.TypeDir || [3]int64{e.mode, int64(e.uid), int64(e.gid)} != want {
			t.Errorf("%s = %+v, want a directory %o %d:%d", p, e, want[0], want[1], want[2])
		}
	}
	if !strings.Contains(passwd, "nonroot:x:65532:65532:nonroot:/home/nonroot:") || !strings.Contains(group, "nonroot:x:65532:") {
		t.Error("passwd or group lacks nonroot")
	}
}

func TestBundle(t *testing.T) {
	got := bundle(map[string][]byte{"b/x.crt": []byte("X"), "a/z.crt": []byte("Z\n"), "a/y.crt": nil})
	if string(got) != "Z\nX\n" {
		t.Errorf("bundle = %q", got)
	}
	got = shells([]byte("# c\n/bin/sh\n\n/usr/bin/sh\n"), []byte("/bin/bash\n/opt/fish\n"))
	if string(got) != "# c\n/bin/sh\n/usr/bin/sh\n/bin/bash\n/usr/bin/bash\n/opt/fish\n" {
		t.Errorf("shells = %q", got)
	}
}

func TestResolve(t *testing.T) {
	tr := newTree()
	tr.files["usr/lib64/ld.so"] = &entry{typ: tar.TypeSymlink, link: "/lib/x86_64-linux-gnu/ld.so"}
	tr.files["usr/lib/x86_64-linux-gnu/ld.so"] = &entry{typ: tar.TypeReg}
	tr.files["usr/bin/loop"] = &entry{typ: tar.TypeSymlink, link: "loop"}
	tr.files["usr/bin/rel"] = &entry{typ: tar.TypeSymlink, link: "../lib64/ld.so"}
	for p, want := range map[string]string{"usr/lib64/ld.so": "usr/lib/x86_64-linux-gnu/ld.so", "usr/bin/rel": "usr/lib/x86_64-linux-gnu/ld.so", "usr/bin/loop": "", "none": ""} {
		if got, ok := tr.resolve(p); got != want || ok != (want != "") {
			t.Errorf("resolve(%q) = %q, %v; want %q", p, got, ok, want)
		}
	}
}

// dynamicELF is the smallest ELF64 program naming loader as its
// PT_INTERP: an ELF header, one program header, the loader's path.
func dynamicELF(t *testing.T, loader string) []byte {
	t.Helper()
	interp := append([]byte(loader), 0)
	const headers = 64 + 56
	var buf bytes.Buffer
	hdr := elf.Header64{
		Type: uint16(elf.ET_EXEC), Machine: uint16(elf.EM_X86_64), Version: uint32(elf.EV_CURRENT),
		Phoff: 64, Ehsize: 64, Phentsize: 56, Phnum: 1, Shentsize: 64,
	}
	copy(hdr.Ident[:], elf.ELFMAG)
	hdr.Ident[elf.EI_CLASS], hdr.Ident[elf.EI_DATA], hdr.Ident[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT)
	prog := elf.Prog64{Type: uint32(elf.PT_INTERP), Off: headers, Filesz: uint64(len(interp)), Memsz: uint64(len(interp)), Align: 1}
	for _, v := range []any{hdr, prog} {
		if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	buf.Write(interp)
	return buf.Bytes()
}

func TestInterpreter(t *testing.T) {
	got, err := interpreter(dynamicELF(t, "/lib64/ld-linux-x86-64.so.2"))
	if err != nil || got != "/lib64/ld-linux-x86-64.so.2" {
		t.Errorf("interpreter = %q, %v; want the PT_INTERP's path", got, err)
	}
	if _, err := interpreter([]byte("#!/bin/sh\n")); err == nil {
		t.Error("a script has a loader")
	}
}

// The same packages make the same image: the layout written twice holds
// the same digest, and its config names the packages.
func TestImageIsDeterministic(t *testing.T) {
	b := bases["python"]
	pkgs := []pkg{{"python3", "3.11.2-1+b1", "amd64"}, {"libc6", "2.36-9", "amd64"}}
	var digests []string
	for i := range 2 {
		tr := newTree()
		tr.files["usr/bin/python3"] = &entry{typ: tar.TypeReg, mode: 0o755, data: []byte("python")}
		var layer bytes.Buffer
		if err := tr.writeTar(&layer, epoch); err != nil {
			t.Fatal(err)
		}
		img, err := image(layer.Bytes(), config("python", b, pkgs, pkg{"ca-certificates", "2025", "all"}), arch(pkgs))
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "python")
		if err := writeLayout(dir, "python", img); err != nil {
			t.Fatal(err)
		}
		p, err := layout.FromPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		idx, err := p.ImageIndex()
		if err != nil {
			t.Fatal(err)
		}
		m, err := idx.IndexManifest()
		if err != nil || len(m.Manifests) != 1 {
			t.Fatalf("index: %v, %v", m, err)
		}
		digests = append(digests, m.Manifests[0].Digest.String())
		if i > 0 {
			continue
		}
		got, err := idx.Image(m.Manifests[0].Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := got.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.OS != "linux" || cf.Architecture != "amd64" || !reflect.DeepEqual(cf.Config.Cmd, []string{"python3"}) ||
			!reflect.DeepEqual(cf.Config.Env, []string{Path}) || len(cf.RootFS.DiffIDs) != 1 ||
			cf.Config.Labels["dev.knit.base.roots"] != "python3=3.11.2-1+b1" ||
			cf.Config.Labels["dev.knit.base.packages"] != "ca-certificates=2025 libc6=2.36-9 python3=3.11.2-1+b1" {
			t.Errorf("config = %+v", cf)
		}
	}
	if digests[0] != digests[1] {
		t.Errorf("the same image has digests %v", digests)
	}
}

// newuidmap and newgidmap lose the setuid bit and gain one file
// capability each, as a container runtime applies it from the layer's
// PAX records.
func TestIDMapsByCapability(t *testing.T) {
	tr := newTree()
	tr.files["usr/bin/newuidmap"] = &entry{typ: tar.TypeReg, mode: 0o4755, data: []byte("elf")}
	tr.files["usr/bin/newgidmap"] = &entry{typ: tar.TypeReg, mode: 0o4755, data: []byte("elf")}
	idMapsByCapability(tr)
	var buf bytes.Buffer
	if err := tr.writeTar(&buf, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{
		"usr/bin/newuidmap": {0x01, 0, 0, 0x02, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		"usr/bin/newgidmap": {0x01, 0, 0, 0x02, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	r := tar.NewReader(&buf)
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[h.Name]
		if !ok {
			continue
		}
		delete(want, h.Name)
		if h.Mode&0o7000 != 0 {
			t.Errorf("%s keeps mode %o, want no setuid bit", h.Name, h.Mode)
		}
		if got := h.PAXRecords["SCHILY.xattr.security.capability"]; got != string(w) {
			t.Errorf("%s security.capability = %x, want %x", h.Name, got, w)
		}
	}
	if len(want) > 0 {
		t.Errorf("not in the layer: %v", want)
	}
}
