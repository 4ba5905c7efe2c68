package dev

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"

	"github.com/knitops/knit/dataplane/forward"
	"github.com/knitops/knit/dataplane/ingress"
	"github.com/knitops/knit/internal/localca"
	"github.com/knitops/knit/platform"
)

// listen binds one of knit dev's loopback endpoints before the control
// plane starts, so a busy port fails in a second, not after a minute of
// startup. The manager serves it, as on a cluster.
func listen(name, addr string, h http.Handler) (*platform.Server, error) {
	srv, err := platform.Listen(name, addr, h)
	if err != nil {
		return nil, fmt.Errorf("%w (pick another with --%s-addr)", err, name)
	}
	srv.ShutdownTimeout = shutdownTimeout
	return srv, nil
}

// caDir holds knit dev's local CA, under the state dir: made once, kept
// so that a user who trusted it keeps trusting knit dev after a restart.
const caDir = "ca"

// listenHTTPS binds the ingress's HTTPS endpoint. Certificates come from
// knit-system's Secrets as on a cluster; any other *.localhost name gets
// one from knit dev's local CA, so every Service answers over HTTPS with
// nothing to configure.
func listenHTTPS(opts Options, router *ingress.Router) (*platform.Server, *localca.CA, error) {
	ca, err := localca.Load(filepath.Join(opts.StateDir, caDir))
	if err != nil {
		return nil, nil, err
	}
	srv, err := platform.ListenTLS("https", opts.HTTPSAddr, router, &tls.Config{})
	if err != nil {
		return nil, nil, fmt.Errorf("%w (pick another with --https-addr)", err)
	}
	srv.ShutdownTimeout = shutdownTimeout
	srv.Server.TLSConfig = router.TLSConfig(port(srv), ca.GetCertificate)
	forward.DefaultLimits.Apply(srv.Server) // the ingress's limits, as on a cluster
	return srv, ca, nil
}

// port is the TCP port srv is bound to.
func port(srv *platform.Server) int { return srv.Listener.Addr().(*net.TCPAddr).Port }
