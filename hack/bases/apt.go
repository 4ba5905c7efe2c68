package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// pkg is one binary package at one version.
type pkg struct{ Name, Version, Arch string }

func (p pkg) String() string { return p.Name + "=" + p.Version }

// debFile is a package's .deb as apt-get download --print-uris tells it.
type debFile struct {
	Pkg    pkg
	URL    string
	File   string // the name apt-get download writes
	Size   int64
	SHA256 string
}

// apt runs apt-get and apt-cache on this machine's package lists,
// resolving as if nothing were installed and seeing this Debian release's
// archives only.
type apt struct {
	tmp  string
	opts []string
}

func newApt(cache string) (*apt, error) {
	codename, err := osCodename("/etc/os-release")
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "knit-bases-apt-")
	if err != nil {
		return nil, err
	}
	prefs := filepath.Join(tmp, "preferences")
	if err := os.WriteFile(prefs, []byte(pinDebian(codename)), 0o644); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	parts := filepath.Join(tmp, "preferences.d")
	if err := os.Mkdir(parts, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	a := &apt{tmp: tmp, opts: []string{
		"-o", "Dir::State::status=/dev/null", // an empty system: the whole closure
		"-o", "Dir::Etc::Preferences=" + prefs,
		"-o", "Dir::Etc::PreferencesParts=" + parts,
	}}
	if cache != "" {
		// apt's parsed lists, kept (Debian's docker-clean turns the
		// system's off): seconds saved on every call after the first.
		dir := filepath.Join(cache, "apt")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		a.opts = append(a.opts,
			"-o", "Dir::Cache::pkgcache="+filepath.Join(dir, "pkgcache.bin"),
			"-o", "Dir::Cache::srcpkgcache="+filepath.Join(dir, "srcpkgcache.bin"))
	}
	return a, nil
}

func (a *apt) close() { os.RemoveAll(a.tmp) }

// pinDebian is an apt preferences file that lets apt take packages from
// Debian's archives of release codename (and its -updates and -security)
// only: every other origin, a third-party repository or backports, gets a
// negative priority and so never becomes a candidate.
func pinDebian(codename string) string {
	var b strings.Builder
	for _, suite := range []string{codename, codename + "-updates", codename + "-security"} {
		fmt.Fprintf(&b, "Package: *\nPin: release o=Debian,n=%s\nPin-Priority: 500\n\n", suite)
	}
	b.WriteString("Package: *\nPin: release *\nPin-Priority: -1\n")
	return b.String()
}

// osCodename reads VERSION_CODENAME from an os-release file.
func osCodename(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	if c := parseOSRelease(data)["VERSION_CODENAME"]; c != "" {
		return c, nil
	}
	return "", fmt.Errorf("%s names no VERSION_CODENAME: not Debian?", file)
}

func parseOSRelease(data []byte) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		} else {
			v = strings.Trim(v, `'"`)
		}
		m[k] = v
	}
	return m
}

func (a *apt) run(dir, prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(prog, append(append([]string{}, a.opts...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", prog, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// closure is what apt-get would install into an empty system for roots,
// without Recommends.
func (a *apt) closure(roots []string) ([]pkg, error) {
	out, err := a.run("", "apt-get", append([]string{"-s", "install", "--no-install-recommends"}, roots...)...)
	if err != nil {
		return nil, err
	}
	pkgs, err := parseSimulation(out)
	if err == nil && len(pkgs) == 0 {
		err = fmt.Errorf("apt-get -s install %s: nothing to install", strings.Join(roots, " "))
	}
	return pkgs, err
}

// parseSimulation reads apt-get -s install's Inst lines:
//
//	Inst libc6 (2.36-9+deb12u14 Debian:12.15/oldstable [amd64]) []
//	Inst media-types (10.0.0 Debian:12.15/oldstable [all])
//	Inst foo [1.0] (1.1 Debian:12/stable [amd64])    an upgrade
func parseSimulation(out []byte) ([]pkg, error) {
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "Inst ")
		if !ok {
			continue
		}
		name, rest, _ := strings.Cut(rest, " ")
		open := strings.IndexByte(rest, '(')
		end := strings.IndexByte(rest, ')')
		if name == "" || open < 0 || end < open {
			return nil, fmt.Errorf("apt-get -s: cannot read %q", line)
		}
		fields := strings.Fields(rest[open+1 : end])
		if len(fields) < 2 {
			return nil, fmt.Errorf("apt-get -s: cannot read %q", line)
		}
		arch := strings.Trim(fields[len(fields)-1], "[]")
		pkgs = append(pkgs, pkg{Name: name, Version: fields[0], Arch: arch})
	}
	return pkgs, sc.Err()
}

// uris asks apt-get download --print-uris where specs' .debs are, with
// their names and hashes.
func (a *apt) uris(specs []string) ([]debFile, error) {
	out, err := a.run("", "apt-get", append([]string{"download", "--print-uris"}, specs...)...)
	if err != nil {
		return nil, err
	}
	files, err := parsePrintURIs(out)
	if err == nil && len(files) != len(specs) {
		err = fmt.Errorf("apt-get download --print-uris: %d files for %d packages", len(files), len(specs))
	}
	return files, err
}

// parsePrintURIs reads apt-get download --print-uris:
//
//	'http://deb.debian.org/debian/pool/main/a/attr/libattr1_2.5.1-4_amd64.deb' libattr1_1%3a2.5.1-4_amd64.deb 22164 SHA256:c494…
func parsePrintURIs(out []byte) ([]debFile, error) {
	var files []debFile
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 4 || !strings.HasPrefix(f[0], "'") || !strings.HasPrefix(f[3], "SHA256:") {
			return nil, fmt.Errorf("apt-get download --print-uris: cannot read %q", line)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("apt-get download --print-uris: size in %q: %w", line, err)
		}
		p, err := parseDebFileName(f[1])
		if err != nil {
			return nil, err
		}
		files = append(files, debFile{Pkg: p, URL: strings.Trim(f[0], "'"), File: f[1], Size: size,
			SHA256: strings.ToLower(strings.TrimPrefix(f[3], "SHA256:"))})
	}
	return files, sc.Err()
}

// parseDebFileName splits name_version_arch.deb as apt-get download names
// it (an epoch's colon written %3a).
func parseDebFileName(file string) (pkg, error) {
	base, ok := strings.CutSuffix(file, ".deb")
	parts := strings.Split(base, "_")
	if !ok || len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" || strings.Contains(file, "/") {
		return pkg{}, fmt.Errorf("%q is not name_version_arch.deb", file)
	}
	return pkg{Name: parts[0], Version: strings.ReplaceAll(parts[1], "%3a", ":"), Arch: parts[2]}, nil
}

// download puts files into cache, each checked against its SHA-256; those
// already there are kept. apt-get downloads into a directory of its own
// first, so an interrupted download leaves nothing behind.
func (a *apt) download(cache string, files []debFile) error {
	var missing []debFile
	var specs []string
	for _, f := range files {
		if err := checkSHA256(filepath.Join(cache, f.File), f.SHA256); err != nil {
			missing = append(missing, f)
			specs = append(specs, f.Pkg.String())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	tmp, err := os.MkdirTemp(cache, ".download-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var size int64
	for _, f := range missing {
		size += f.Size
	}
	fmt.Fprintf(os.Stderr, "bases: apt-get download %d packages (%.1f MB) into %s\n", len(missing), float64(size)/1e6, cache)
	// As root apt drops to the _apt user, who may not write here.
	if _, err := a.run(tmp, "apt-get", append([]string{"-q", "-o", "APT::Sandbox::User=root", "download"}, specs...)...); err != nil {
		return err
	}
	for _, f := range missing {
		p := filepath.Join(tmp, f.File)
		if err := checkSHA256(p, f.SHA256); err != nil {
			return err
		}
		if err := os.Rename(p, filepath.Join(cache, f.File)); err != nil {
			return err
		}
	}
	return nil
}

func checkSHA256(file, want string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return errors.New(file + ": SHA-256 " + got + ", want " + want)
	}
	return nil
}
