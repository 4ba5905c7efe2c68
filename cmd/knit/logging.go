package main

import (
	"io"
	"log/slog"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// setupLogging sends controller-runtime's and client-go's logs through one
// slog text handler, warnings and errors only unless -v asks for more.
func setupLogging(w io.Writer, verbosity int) {
	level := slog.LevelWarn
	if verbosity > 0 {
		// -v=1 is Info; each further step enables one more logr V-level.
		level = slog.Level(1 - verbosity)
	}
	logger := logr.FromSlogHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
}
