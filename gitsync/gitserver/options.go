package gitserver

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-logr/logr"
)

// DefaultMaxPushBytes is the default of Options.MaxPushBytes.
const DefaultMaxPushBytes = 512 << 20

// DefaultPathPrefix is the default of Options.PathPrefix.
const DefaultPathPrefix = "/git"

// Options configure a Server. Root is required; Defaults fills the rest.
type Options struct {
	// Root holds the bare repositories, one <name>.git directory each. It
	// is created if missing.
	Root string
	// PathPrefix is the URL path the repositories are served under:
	// <PathPrefix>/<name>.git/…. Default DefaultPathPrefix.
	PathPrefix string
	// Git is the git executable, looked up in PATH unless it is a path.
	// Default "git".
	Git string
	// MaxPushBytes bounds the body of every request (a push's pack, a
	// fetch's negotiation), after gzip decoding. Default
	// DefaultMaxPushBytes.
	MaxPushBytes int64
	// OnPush, when set, is told about every push that changed refs. See
	// the package doc for when it runs.
	OnPush func(context.Context, Push)
	// WaitForOnPush makes a push wait for OnPush to return before its
	// response completes, so `git push` returns after knit's sync.
	WaitForOnPush bool
	// Log receives http-backend's error output and the server's own
	// errors. Default: discard.
	Log logr.Logger
}

// Defaults fills what was left empty.
func (o *Options) Defaults() error {
	if o.PathPrefix == "" {
		o.PathPrefix = DefaultPathPrefix
	}
	if o.Git == "" {
		o.Git = "git"
	}
	if !strings.ContainsRune(o.Git, filepath.Separator) {
		// net/http/cgi runs a relative path from the root directory.
		git, err := exec.LookPath(o.Git)
		if err != nil {
			return fmt.Errorf("git server: the git executable: %w", err)
		}
		o.Git = git
	}
	if o.MaxPushBytes == 0 {
		o.MaxPushBytes = DefaultMaxPushBytes
	}
	if o.Log.GetSink() == nil {
		o.Log = logr.Discard()
	}
	if o.Root != "" {
		root, err := filepath.Abs(o.Root)
		if err != nil {
			return fmt.Errorf("git server: root: %w", err)
		}
		o.Root = root
	}
	return nil
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	var errs []error
	if o.Root == "" {
		errs = append(errs, errors.New("git server: a root directory is required"))
	}
	if !strings.HasPrefix(o.PathPrefix, "/") || strings.HasSuffix(o.PathPrefix, "/") {
		errs = append(errs, fmt.Errorf("git server: path prefix %q must start with / and not end with one", o.PathPrefix))
	}
	if o.MaxPushBytes < 0 {
		errs = append(errs, fmt.Errorf("git server: MaxPushBytes %d is negative", o.MaxPushBytes))
	}
	return errors.Join(errs...)
}
