// Command bench is `make bench`: in one run, on loopback, it measures a
// trivial app reached directly and through proxies, with a bounded
// closed-loop load of four request shapes (queuebench's shape.go): a small
// GET at concurrency 1, 10 and 100 for 3 s a cell, and a POST with a 4 KiB
// body, a GET answered by a streamed 1 MiB, and an h2c GET at concurrency
// 1 and 10 for 1 s a cell (-shape-concurrency, -shape-duration).
// knit-queue's HTTP/1 fast path takes body-less GETs only; the POST and
// h2c go through its ReverseProxy, and the targets are judged on every
// shape, so none is met by the one shape a proxy is tuned for. The shorter
// cells of the other shapes keep the request-path part within twice its
// GET-only time (13 paths × 3 GET cells × 3.3 s with warm-ups, plus 38
// path-shape pairs × 2 cells × 1.3 s: about 230 s, against 120 s before
// the shapes). A path that cannot carry a shape is shown n/a with the
// reason (shapes.go).
//
// The paths, in the bench's process: a bare httputil.ReverseProxy (default
// transport, and pooled as a production proxy configures it), knit's
// queue-proxy (containerConcurrency 0 and 10), the ingress router to the
// queue-proxy, and the ingress and the activator to it. As processes of
// their own, as in a pod: knit-queue, Knative Serving's queue-proxy at a
// pinned release (make knative-queue, built in hack/knative) with the same
// environment, the same knit-queue with its fast path off
// (QUEUE_DISABLE_FAST_PATH, cc=0: its gain on its own), and the pooled
// bare proxy (bareproxy, taking and speaking h2c as the queue-proxies do),
// with their resident memory. Then the edge part (edge.go): knit's
// ingress (edgeproxy, its fast path on and off) and Debian's nginx in
// its best reverse-proxy configuration, each a process in front of the
// same knit-queue, over HTTP/1.1, HTTP/1.1 over TLS and h2 over TLS, a
// small GET, a 64 KiB GET and a 4 KiB POST at -edge-concurrency, and
// new TLS connections to each; nginx's cells are left out, saying so,
// where it is not installed. Then it starts `knit dev`, scales
// examples/helloworld to zero and times cold starts against the same app
// binary's own start time, as a ko:// Service and, as root with runc, as
// an image pushed to a loopback registry (with runc's own start of it
// beside); times first pulls of a 50 MiB image by knit's image store and
// by crane (-pull-runs); and, given the test cluster, cold starts on
// real pods and push → serving of ko:// and dockerfile:// images built
// in Jobs (-cluster-dockerfile-runs). It prints a markdown report and writes it to
// docs/benchmarks.md, keeping the previous cluster section when this run
// has none. -only runs some parts: without the request-path part, each
// part run writes its own section into the page (-only edge).
//
// Everything shares the machine's CPU, so numbers are compared within
// one run, never across machines or runs.
package main
