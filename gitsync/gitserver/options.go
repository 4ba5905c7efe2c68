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

// DefaultMaxPushBytes is the default of Options.MaxPushBytes: a push
// bigger than this carries build outputs or media, not what knit deploys
// from (and knit's fetch would refuse it: gitsource.DefaultMaxFetchBytes).
const DefaultMaxPushBytes = 100 << 20

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
	// fetch's negotiation), after gzip decoding. A push over it is
	// refused with a message git shows, and nothing of it is stored.
	// Default DefaultMaxPushBytes.
	MaxPushBytes int64
	// LimitHint tells the user of a refused push how to raise
	// MaxPushBytes where this server runs, e.g. "raise the limit with
	// knit dev --git-max-push-size". Empty says nothing.
	LimitHint string
	// OnPush, when set, is told about every push that changed refs. See
	// the package doc for when it runs.
	OnPush func(context.Context, Push)
	// WaitForOnPush makes a push wait for OnPush to return before its
	// response completes, so `git push` returns after knit's sync.
	WaitForOnPush bool
	// Token returns the credential every request must carry: the
	// password of HTTP Basic authentication under any user name (what git
	// sends from a URL like http://knit:<token>@host/…, or from a
	// credential helper), or a bearer token. It is asked on every request,
	// so a token kept in a Secret can be rotated. Required: a server that
	// accepts anonymous pushes runs anyone's code.
	Token func(context.Context) (string, error)
	// Hosts are the host names (or addresses) a request's Host header may
	// name; its port is not compared. A browser page whose own name an
	// attacker pointed at the server (DNS rebinding) names its own host,
	// and is refused with 421 before anything else. The loopback names
	// (LoopbackHosts) are always accepted.
	Hosts []string
	// AnyIPHost also accepts a Host header that is any IP address: DNS
	// rebinding needs a name, and on a cluster the server is reached by
	// ClusterIP, node or pod address as well as by name.
	AnyIPHost bool
	// Log receives http-backend's error output and the server's own
	// errors. Default: discard.
	Log logr.Logger
}

// LoopbackHosts are accepted in the Host header of every server: what
// git sends when it reaches knit dev, or a port-forward, on loopback.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

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
	if o.Token == nil {
		errs = append(errs, errors.New("git server: a Token is required: a server anyone can push to runs anyone's code"))
	}
	if o.MaxPushBytes < 0 {
		errs = append(errs, fmt.Errorf("git server: MaxPushBytes %d is negative", o.MaxPushBytes))
	}
	return errors.Join(errs...)
}
