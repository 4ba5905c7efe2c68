package dev

import (
	"fmt"
	"net/http"

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
