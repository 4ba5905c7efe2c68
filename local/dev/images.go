package dev

import (
	"context"
	"fmt"

	"github.com/knitops/knit/local/runtime"
)

// openImages opens what runs container images, when this machine can
// (root on Linux, runc installed); otherwise only ko:// and knit://
// images run, and the banner says why.
func openImages(ctx context.Context, opts Options) (*runtime.OCI, string) {
	oci, err := runtime.OpenOCI(ctx, runtime.OCIOptions{StateDir: opts.StateDir, PlainHTTPRegistries: opts.PlainHTTPRegistries})
	if err != nil {
		return nil, fmt.Sprintf("ko:// only: container images need root on Linux and runc (%v)", err)
	}
	return oci, "pulled and run with runc, each in its own root filesystem"
}
