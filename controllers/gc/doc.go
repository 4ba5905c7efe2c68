// Package gc collects Revisions no Route needs any more, with Knative's
// config-gc knobs: keep at least min-non-active-revisions, collect those
// older than retain-since-create-time and idle longer than
// retain-since-last-active-time, and never keep more than
// max-non-active-revisions. A Revision a Route references, or the latest
// created or ready one, is never collected.
package gc
