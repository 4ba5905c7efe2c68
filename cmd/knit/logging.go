package main

import (
	"io"
	"log/slog"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// setupLogging sends controller-runtime's, client-go's and slog's default
// logs (the activator's, the event dispatcher's) through one slog text
// handler, warnings and errors only unless -v asks for more.
func setupLogging(w io.Writer, verbosity int) {
	level := slog.LevelWarn
	if verbosity > 0 {
		// -v=1 is Info; each further step enables one more logr V-level
		// (logr's V(n) is slog level -n, so -v=5 shows slog's Debug).
		level = slog.Level(1 - verbosity)
	}
	handler := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})
	logger := logr.FromSlogHandler(handler)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
	// SetDefault also routes the log package through the handler; its
	// callers (net/http's server and proxy errors) print at Warn, so they
	// stay visible without -v as they were before.
	slog.SetLogLoggerLevel(slog.LevelWarn)
	slog.SetDefault(slog.New(handler))
}
