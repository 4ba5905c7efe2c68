// Command bench is `make bench`: in one run, on loopback, it measures a
// trivial app reached directly, through a bare httputil.ReverseProxy,
// through knit's queue-proxy (containerConcurrency 0 and 10), through the
// ingress router to the queue-proxy, and through the ingress and the
// activator to the queue-proxy, with a bounded closed-loop load at
// concurrency 1, 10 and 100; then it starts `knit dev`, scales
// examples/helloworld to zero and times cold starts against the same
// app binary's own start time. It prints a markdown report and writes it
// to docs/benchmarks.md.
//
// Everything shares the machine's CPU, so numbers are compared within
// one run, never across machines or runs.
package main
