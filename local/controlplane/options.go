package controlplane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Options say where the control plane keeps its state and finds its
// binaries. The zero value works from a repository checkout after
// `make tools`.
type Options struct {
	// StateDir keeps etcd's data, the keys, the kubeconfig and the logs, so
	// a restart picks up where the last run stopped. Default ".knit".
	StateDir string
	// BinDir holds the kube-apiserver and etcd that `make tools` built.
	// Default "bin".
	BinDir string
	// LogDir receives etcd.log and kube-apiserver.log, the children's
	// output, which is too noisy for knit's terminal but is the first
	// place to look when they fail. Each start rewrites them. Default
	// "<StateDir>/logs".
	LogDir string
	// APIPort is the API server's loopback port. 0 reuses the port of the
	// previous run when it is free, so an exported kubeconfig keeps
	// working, and picks any free port otherwise.
	APIPort int
	// StartTimeout bounds how long Start waits for both processes to
	// answer. Default 90s, enough for a first start on a slow disk.
	StartTimeout time.Duration
}

const defaultStartTimeout = 90 * time.Second

// Validate fills defaults and reports what cannot work before anything
// starts, most often binaries that were never built.
func (o *Options) Validate() error {
	if o.StateDir == "" {
		o.StateDir = ".knit"
	}
	if o.BinDir == "" {
		o.BinDir = "bin"
	}
	if o.LogDir == "" {
		o.LogDir = filepath.Join(o.StateDir, "logs")
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.APIPort < 0 || o.APIPort > 65535 {
		return fmt.Errorf("API port %d is not a port", o.APIPort)
	}
	for _, name := range []string{"kube-apiserver", "kube-controller-manager", "etcd"} {
		if err := checkBinary(o.BinDir, name); err != nil {
			return err
		}
	}
	for _, dir := range []*string{&o.StateDir, &o.BinDir, &o.LogDir} {
		abs, err := filepath.Abs(*dir)
		if err != nil {
			return fmt.Errorf("resolve %s: %w", *dir, err)
		}
		*dir = abs
	}
	return nil
}

func (o *Options) binary(name string) string { return filepath.Join(o.BinDir, name) }

func checkBinary(dir, name string) error {
	shown := dir
	if !filepath.IsAbs(shown) && !strings.HasPrefix(shown, ".") {
		shown = "./" + shown
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		return fmt.Errorf("%s not found in %s: run `make tools`", name, shown)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s in %s is not an executable: run `make tools`", name, shown)
	}
	return nil
}
