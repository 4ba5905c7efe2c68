// Package platform is knit's composition root: the one place that wires
// reconcilers, admission webhooks, the event dispatcher, the autoscaler and
// the request-path servers onto a controller-runtime manager. `knit dev`
// and the cluster commands (`knit controller`, `knit autoscaler run`,
// `knit ingress`, `knit activator`, `knit gitserver`) all call it, so the
// two ways to run knit differ only in the options they pass — above all
// where replicas run — never in how a Service becomes a Revision.
package platform
