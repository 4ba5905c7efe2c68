package main

import (
	"flag"
	"fmt"
	"path"
	"strings"
)

// options are the builder's flags, as gitsync/build's Job passes them.
type options struct {
	source, commit, pkg   string
	image, tag, platform  string
	insecure              bool
	workspace, caBundle   string
	terminationLog, goCmd string
}

func (o *options) register(fl *flag.FlagSet) {
	fl.StringVar(&o.source, "source", "", "Git URL to fetch the commit from")
	fl.StringVar(&o.commit, "commit", "", "full SHA of the commit to build")
	fl.StringVar(&o.pkg, "package", "", "package to build, relative to the repository's root (./cmd/hello) or an import path")
	fl.StringVar(&o.image, "image", "", "registry repository to push to, e.g. registry.example/ns/repo/hello")
	fl.StringVar(&o.tag, "tag", "", "tag of the pushed image: the build key")
	fl.StringVar(&o.platform, "platform", "linux/amd64", "os/arch of the image")
	fl.BoolVar(&o.insecure, "insecure", false, "allow plain HTTP and unverified TLS to the registry")
	fl.StringVar(&o.workspace, "workspace", "/workspace", "scratch directory for the checkout and the binary")
	fl.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied into the image; empty for none")
	fl.StringVar(&o.terminationLog, "termination-log", "/dev/termination-log", "where the JSON result goes (- for stdout)")
	fl.StringVar(&o.goCmd, "go", "go", "the go command")
}

func (o *options) validate() error {
	var missing []string
	for name, v := range map[string]string{"source": o.source, "commit": o.commit, "package": o.pkg, "image": o.image, "tag": o.tag} {
		if v == "" {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	if _, _, err := o.goosArch(); err != nil {
		return err
	}
	return nil
}

// goosArch splits --platform.
func (o *options) goosArch() (goos, goarch string, err error) {
	goos, goarch, ok := strings.Cut(o.platform, "/")
	if !ok || goos == "" || goarch == "" {
		return "", "", fmt.Errorf("--platform %q is not os/arch", o.platform)
	}
	return goos, goarch, nil
}

// program is the binary's name in the image: the repository's last
// element, as the controller named it after the package.
func (o *options) program() string { return path.Base(o.image) }
