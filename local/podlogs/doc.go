// Package podlogs is knit dev's kubelet log endpoint: the one piece of a
// kubelet's API the API server needs for `kubectl logs`.
//
// On a cluster the API server answers GET .../pods/P/log by calling the
// pod's kubelet at https://<node address>:<kubeletEndpoint port>/containerLogs/
// {namespace}/{pod}/{container} with its kubelet client certificate. knit
// dev has no kubelet: its runtime runs replicas as local processes and
// writes their output to files. Server serves that one path over TLS on
// loopback, and only to a client certificate of knit dev's CA with the API
// server's kubelet-client name, so the API server's own authorization
// (RBAC on pods/log) is what decides who reads a log, as on a cluster.
//
// # Files
//
// Log files hold one line per line written, each prefixed with the time it
// was written (RFC 3339, nanoseconds, UTC) and a space, as the kubelet's
// CRI log files do (Writer writes them). That time is what sinceSeconds,
// sinceTime and timestamps need; timestamps=false strips it. A line
// without a valid prefix (a file from before) is passed on as it is and
// never filtered out by since. A line is written when it ends (or at
// 16 KiB, or when its stream closes), so a follower sees a prompt without
// a newline only then.
//
// Which file a container's log is, and whether it still grows, is the
// Source's: the runtime for replicas, knit dev's build runner for the
// mirror pods of builds.
package podlogs
