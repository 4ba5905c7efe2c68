// Package events announces what knit did, as CloudEvents, to the HTTP
// endpoints users subscribe with EventSinks: a revision became ready or
// failed, a route's traffic changed, a sync from Git failed.
//
// [NewEvent] builds an event from an [Occurrence]: a type (the Type*
// constants), the resource it is about (source /knit/<namespace>/<kind>,
// subject <namespace>/<name>) and [Data]. Its id is derived from the
// occurrence, not drawn at random, so announcing the same occurrence twice
// (after a controller restart, say) yields the same id and receivers can
// drop the repeat.
//
// A [Dispatcher] delivers events to sinks at least once, in order per sink:
// each sink has its own worker goroutine and bounded queue, retries network
// errors, 5xx, 408 and 429 with exponential backoff and jitter for as long
// as it takes, and gives up only on other 4xx answers (the sink will never
// take the event) or when the queue overflows (the oldest event is dropped).
// Both are logged and counted, by sink, in Prometheus:
//
//	knit_events_delivered_total{sink}
//	knit_events_failed_attempts_total{sink}
//	knit_events_dropped_total{sink,reason}     reason: overflow | rejected | denied | removed | shutdown | unreadable
//	knit_events_queue_depth{sink}
//	knit_events_delivery_latency_seconds{sink} from Send to the sink's 2xx, retries included
//
// Send never blocks; a sink outage loses nothing as long as its queue
// (Options.QueueSize events, Options.QueueBytes of them in JSON) holds the
// events sent meanwhile.
//
// With a [Store] (Options.Store; knit uses gitsync/eventstore's
// ConfigMaps) the queue, the event in flight and the counts outlive the
// process: each change is written after the fact, a new Dispatcher reads a
// sink's state before delivering to it, and Close leaves what it could not
// deliver in the store instead of dropping it. Still at least once: an
// event the sink took just before a crash may be sent again, with its id.
//
// An event whose id the sink has queued, in flight, or took lately (the
// last QueueSize ids, kept in the Store too) is a repeat and is not queued
// again: an occurrence announced at every resync reaches the sink once.
package events
