// Command registry is the CNCF Distribution registry, built from the Go
// module proxy at a pinned release for knit's test cluster: the registry
// in-cluster builds push ko:// images to and containerd pulls them from
// (make cluster starts it on the node). Only the filesystem storage driver
// is linked: the test registry keeps blobs under the cluster's state dir.
package main

import (
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"

	"github.com/distribution/distribution/v3/registry"
)

func main() {
	// Execute prints its own error; a non-nil one is a failed start.
	if err := registry.RootCmd.Execute(); err != nil {
		panic(err)
	}
}
