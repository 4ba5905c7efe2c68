package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var pythonBin = regexp.MustCompile(`^usr/bin/python3\.[0-9]+$`)

// pyCompile does what python3.X's postinst and py3compile would: it
// byte-compiles the standard library (and /usr/share/python3), so a
// program does not compile http.server and the rest on every start when it
// may not write them (0.08s instead of 0.4s to import http.server). It runs
// the image's own interpreter through the image's own loader, as any user;
// the .pyc files record the sources' fixed mtime and size, so they are
// valid in the image and the same every time.
func pyCompile(t *tree) error {
	var pythons []string
	for p, e := range t.files {
		if pythonBin.MatchString(p) && e.typ == tar.TypeReg {
			pythons = append(pythons, p)
		}
	}
	if len(pythons) == 0 {
		return nil
	}
	sort.Strings(pythons)
	dir, err := os.MkdirTemp("", "knit-bases-pyc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var layer bytes.Buffer
	if err := t.writeTar(&layer, epoch); err != nil {
		return err
	}
	untar := exec.Command("tar", "-x", "--no-same-owner", "-C", dir)
	untar.Stdin = &layer
	if out, err := untar.CombinedOutput(); err != nil {
		return fmt.Errorf("unpack to byte-compile: %w: %s", err, out)
	}
	for _, py := range pythons {
		interp, err := interpreter(t.files[py].data)
		if err != nil {
			return fmt.Errorf("%s: %w", py, err)
		}
		loader, ok := t.resolve(canonical(interp))
		if !ok {
			return fmt.Errorf("%s: its loader %s is not in the image", py, interp)
		}
		lib := "usr/lib/" + path.Base(py) // usr/lib/python3.11
		dirs := []string{lib}
		if t.isDir("usr/share/python3") {
			dirs = append(dirs, "usr/share/python3")
		}
		// -S: no site. -B: the compiler's own imports write no .pyc
		// (they would name this directory, and compileall would keep
		// them). PYTHONHOME: the image's library, not the loader's.
		script := `import compileall, sys
root = sys.argv[1]
ok = all([compileall.compile_dir(root + "/" + d, quiet=2, stripdir=root, prependdir="/", force=True)
          for d in sys.argv[2:]])
sys.exit(0 if ok else 1)`
		cmd := exec.Command(filepath.Join(dir, loader), "--library-path", filepath.Join(dir, path.Dir(loader)),
			filepath.Join(dir, py), "-S", "-B", "-c", script, dir)
		cmd.Args = append(cmd.Args, dirs...)
		cmd.Env = []string{"PYTHONHOME=" + filepath.Join(dir, "usr"), "LC_ALL=C.UTF-8", "SOURCE_DATE_EPOCH=0"}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("byte-compile %s with %s: %w: %s", strings.Join(dirs, " "), py, err, out)
		}
		for _, d := range dirs {
			err := filepath.WalkDir(filepath.Join(dir, d), func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.Type().IsRegular() || !strings.HasSuffix(p, ".pyc") {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				t.file(filepath.ToSlash(rel), 0o644, 0, data)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return t.addParents()
}

// interpreter is an ELF program's PT_INTERP, its dynamic loader.
func interpreter(program []byte) (string, error) {
	f, err := elf.NewFile(bytes.NewReader(program))
	if err != nil {
		return "", err
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return "", err
			}
			return strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", fmt.Errorf("not a dynamically linked program")
}

// resolve follows the symlinks at p (its last component; the directories
// above it are real) to a file of the tree.
func (t *tree) resolve(p string) (string, bool) {
	for range 40 {
		e, ok := t.files[p]
		if !ok {
			return "", false
		}
		if e.typ != tar.TypeSymlink {
			return p, e.typ == tar.TypeReg
		}
		if path.IsAbs(e.link) {
			p = canonical(e.link)
		} else {
			p = canonical(path.Join(path.Dir(p), e.link))
		}
	}
	return "", false
}
