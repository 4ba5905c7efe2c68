// Package kpa is the live KPA: one decider per PodAutoscaler (the pure
// logic of dataplane/autoscaler), fed every tick by scraping the Revision's
// queue-proxies and by the activator's pokes and stats, and asked by the
// PodAutoscaler reconciler what scale and SKS mode to apply. It wakes that
// reconciler on every tick and at once when a request reaches a Revision
// at zero.
package kpa
