package volumes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The layout of a volume of API data, the kubelet's (its AtomicWriter):
// the files live in a timestamped directory, ..data points to it, and each
// name the app sees is a link through ..data. An update writes a new
// directory and swaps ..data with one rename, so an app never reads half
// of an old payload and half of a new one.
const (
	dataDirName    = "..data"
	newDataDirName = "..data_tmp"
)

// WriteAtomic makes dir (which exists) hold p, in the kubelet's layout:
// on the first call it lays it out, on later ones it swaps the new
// payload in and removes what the old one had and the new one has not.
func WriteAtomic(dir string, p Payload) error {
	old, err := os.Readlink(filepath.Join(dir, dataDirName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	ts, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		return err
	}
	if err := os.Chmod(ts, 0o755); err != nil {
		return err
	}
	if err := p.write(ts); err != nil {
		os.RemoveAll(ts)
		return err
	}
	link := filepath.Join(dir, newDataDirName)
	os.Remove(link)
	if err := os.Symlink(filepath.Base(ts), link); err != nil {
		return err
	}
	if err := os.Rename(link, filepath.Join(dir, dataDirName)); err != nil {
		return err
	}
	if err := linkVisible(dir, p); err != nil {
		return err
	}
	if old != "" && old != filepath.Base(ts) {
		return os.RemoveAll(filepath.Join(dir, old))
	}
	return nil
}

// linkVisible makes each top-level name of p a link through ..data, and
// removes the links of names p no longer has.
func linkVisible(dir string, p Payload) error {
	want := map[string]bool{}
	for name := range p {
		want[strings.SplitN(filepath.ToSlash(name), "/", 2)[0]] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") && !want[e.Name()] && e.Type()&fs.ModeSymlink != 0 {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for name := range want {
		target := filepath.Join(dataDirName, name)
		if got, err := os.Readlink(filepath.Join(dir, name)); err == nil && got == target {
			continue
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("link %s: %w", name, err)
		}
	}
	return nil
}
