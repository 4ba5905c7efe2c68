//go:build !unit

package e2e

import (
	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// The tests' API clients log nothing worth reading; knit dev's own output
// is what a failing test shows.
func init() { log.SetLogger(logr.Discard()) }
