package main

import (
	"flag"
	"fmt"

	"github.com/knitops/knit/internal/hopauth"
)

// defaultInternalKeyFile is where the chart mounts the knit-internal-key
// Secret into the activator, the autoscaler and the ingress.
const defaultInternalKeyFile = "/etc/knit/internal-key/keys"

// internalKeyFlag registers --internal-key-file on fs.
func internalKeyFlag(fs *flag.FlagSet) *string {
	return fs.String("internal-key-file", defaultInternalKeyFile,
		"`file` of the keys the activator, the autoscaler and the ingress authenticate each other with, one a line (the first signs); re-read when it changes")
}

// loadInternalKeys reads the keys, refusing to start without them: the
// component would otherwise either trust every pod or be refused by its
// peers.
func loadInternalKeys(path string) (*hopauth.Keyring, error) {
	keys, err := hopauth.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--internal-key-file: %w (the chart mounts the knit-internal-key Secret there)", err)
	}
	return keys, nil
}
