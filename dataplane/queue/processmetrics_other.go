//go:build !linux

package queue

// addProcessMetrics registers nothing off Linux: the process_* families
// are read from /proc. knit's sidecars run on Linux; on macOS knit dev's
// replicas serve /metrics without them.
func addProcessMetrics(reg *metricsRegistry) {}
