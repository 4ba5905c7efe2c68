// Command bench is `make bench`: in one run, on loopback, it measures a
// trivial app reached directly and through proxies, with a bounded
// closed-loop load at concurrency 1, 10 and 100. In its own process: a
// bare httputil.ReverseProxy (default transport, and pooled as a
// production proxy configures it), knit's queue-proxy (containerConcurrency
// 0 and 10), the ingress router to the queue-proxy, and the ingress and
// the activator to it. As processes of their own, as in a pod: knit-queue,
// Knative Serving's queue-proxy at a pinned release (make knative-queue,
// built in hack/knative) with the same environment, and the pooled bare
// proxy (bareproxy), with their resident memory. Then it starts `knit
// dev`, scales examples/helloworld to zero and times cold starts against
// the same app binary's own start time, and, given the test cluster, cold
// starts on real pods. It prints a markdown report and writes it to
// docs/benchmarks.md, keeping the previous cluster section when this run
// has none.
//
// Everything shares the machine's CPU, so numbers are compared within
// one run, never across machines or runs.
package main
