// Package canary is the pure logic of a pull request's canary: what the
// user asked for, and whether the canary's numbers allow the next step.
//
// It has two halves and no Kubernetes or forge client in either:
//
//   - the plan: a [Plan] (traffic steps, the time each step is watched,
//     automerge, [Thresholds]) parsed from where a user writes it — a line
//     in the PR description, a PR label or the knit.dev/canary annotation
//     on the branch's Service — with [Resolve] choosing one (description >
//     label > annotation);
//   - the analysis: [Snapshot]s of the queue-proxies' own Prometheus
//     metrics (knit_queue_requests_total and
//     knit_queue_request_duration_seconds, read by [ParseMetrics] or
//     [Scrape]), differenced over a step's window ([Delta],
//     [DeltaReplicas]), and [Analyze] comparing the canary's window with
//     the stable revision's into a [Verdict]: Pass, Fail or Inconclusive
//     (too few requests yet), with a reason written for the PR it will be
//     posted on.
//
// The controller that moves traffic, posts statuses and merges owns the
// clock and the side effects; everything here is a function of its
// inputs, so every rule is table-tested.
//
// # Asking for a canary
//
//	PR description line   knit: canary 10,25,50 every 2m
//	PR label              knit/canary            (the defaults)
//	                      knit/canary: 5,50 every 30s
//	Service annotation    knit.dev/canary: "10,25,50 every 2m max-5xx 2"
//
// All three share one grammar, case-insensitive, words in any order, each
// at most once, anything left out taking its default (DefaultPlan:
// 10,25,50 every 2m; DefaultThresholds):
//
//	[<steps>] [every <interval>] [automerge] [max-5xx <points>] [max-p99 <ratio>x] [min-requests <n>]
//
// <steps> are up to 10 increasing percents of the base Service's traffic
// (10,25,50; spaces after commas and a trailing % are fine), <interval> a
// duration with a unit, at least 5s (30s, 2m, 1h). max-5xx is how many
// percentage points the canary's 5xx rate may exceed stable's by (default
// 1), max-p99 how many times stable's p99 (plus 10 ms) the canary's may
// be (default 1.2x), min-requests how many requests the canary must serve
// in a step before it is judged (default 20). [Plan.String] writes a plan
// back in this grammar.
//
// The grammar still parses automerge, but this package only reads what
// was written: the pull request controller decides what an author may
// ask for (automerge only from a maintainer's label, thresholds from the
// author's text only stricter than the defaults, nothing from a fork).
package canary
