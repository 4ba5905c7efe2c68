// Package autoscaler holds the decision logic of knit's KPA: the Knative Pod
// Autoscaler's algorithm, reimplemented as pure, deterministic code so that a
// user moving from Knative sees the same scaling decisions for the same load.
//
// The room has four parts, each with no clock, goroutine or client inside:
//
//   - Config and Spec turn the config-autoscaler ConfigMap and a revision's
//     autoscaling.knative.dev/* annotations into the numbers the KPA uses
//     (NewConfigFromMap, NewSpec); the annotations are read by package
//     api/autoscaling, the parser admission checks them with.
//   - Metrics keeps one-second buckets of the revision's observed concurrency
//     and requests per second and averages them over the stable and panic
//     windows.
//   - Decider turns those averages and the ready pod count into a Decision
//     every tick: the desired pod count, panic mode and the excess burst
//     capacity that says whether the activator must stay in the request path.
//   - Reconcile is what the PodAutoscaler reconciler does with a Decision:
//     min/max/initial scale, the scale-to-zero rules (stable window, grace
//     period, pod retention) and the ServerlessService mode.
//
// Time is always an argument, so the live autoscaler and `knit autoscaler
// simulate` (Simulate) run exactly the same calls; the simulator only
// replaces the clock, the metric scraper and the pods.
package autoscaler
