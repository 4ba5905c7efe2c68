package pack

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"strings"
)

// Closure returns the shared libraries and the dynamic loader a program
// needs at run time, as absolute paths on the build machine in the order
// ldd lists them; nil when file is not a dynamically linked ELF program (a
// static Go binary, a script, a data file).
//
// ldd asks the loader itself, so the list is the whole transitive closure
// the loader resolves here (the same paths it will look up in the image,
// where they are copied to the same place).
func Closure(file string) ([]string, error) {
	dynamic, err := isDynamicELF(file)
	if err != nil || !dynamic {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command("ldd", file)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w: %s", file, err, strings.TrimSpace(stderr.String()))
	}
	return parseLdd(file, out)
}

// isDynamicELF reports whether file is an ELF object with a program
// interpreter (PT_INTERP), the mark of a dynamically linked program.
func isDynamicELF(file string) (bool, error) {
	f, err := elf.Open(file)
	if err != nil {
		var formatErr *elf.FormatError
		if errors.As(err, &formatErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil // not ELF, or too short to be
		}
		return false, fmt.Errorf("read ELF %s: %w", file, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true, nil
		}
	}
	return false, nil
}

// parseLdd reads ldd's output:
//
//	linux-vdso.so.1 (0x00007ffd...)                     the kernel's, no file
//	libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)
//	/lib64/ld-linux-x86-64.so.2 (0x...)                 the loader
//	libfoo.so.1 => not found                            an error
func parseLdd(file string, out []byte) ([]string, error) {
	var libs []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.Contains(line, "statically linked") {
			continue
		}
		p := line
		if name, resolved, ok := strings.Cut(line, "=>"); ok {
			resolved = strings.TrimSpace(resolved)
			if strings.HasPrefix(resolved, "not found") {
				return nil, fmt.Errorf("ldd %s: %s not found", file, strings.TrimSpace(name))
			}
			p = resolved
		}
		if i := strings.Index(p, " ("); i >= 0 {
			p = p[:i]
		}
		p = strings.TrimSpace(p)
		if !path.IsAbs(p) {
			continue // linux-vdso.so.1: mapped by the kernel
		}
		if !seen[p] {
			seen[p] = true
			libs = append(libs, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ldd %s: %w", file, err)
	}
	return libs, nil
}
