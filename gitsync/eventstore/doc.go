// Package eventstore keeps the CloudEvents dispatcher's undelivered
// events (gitsync/events.Store) in ConfigMaps of knit-system, one per
// EventSink, so a restart resumes delivery instead of losing them.
//
// Why ConfigMaps in the API server rather than files: it is the one store
// both modes already have and keep. knit dev's API server writes to etcd
// in its state dir, so the events outlive a restart of knit dev with no
// file of their own; on a cluster the controller's replicas share it, so
// a new leader resumes what the last one left — a file would need a PVC,
// which a Deployment of two replicas cannot share, and would stay behind
// on the old leader's node. The dispatcher bounds each sink's queue to
// well under a ConfigMap's 1 MiB (events.Options.QueueBytes) and drops
// the oldest beyond it, counted in the EventSink's status. The
// ConfigMaps live in knit-system, not in the sinks' namespaces: knit may
// write only there, and users neither see nor edit its delivery state.
package eventstore
