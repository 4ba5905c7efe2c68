// Package dev is `knit dev`, the embedded local mode: it takes the state
// directory, brings up (or connects to) a Kubernetes API, installs knit's
// CRDs, serves and registers the admission webhooks, runs the loopback
// listeners and two controller-runtime managers, and tears all of it down
// again on Ctrl-C. It wires rooms together; the work lives in the packages
// it calls.
//
// # Two managers, so that a restart of the controllers drops nothing
//
// The data plane (dataplane.go) runs on one manager for the life of the
// process: the ingress, the activator, the autoscaler that wakes revisions
// at zero, the local runtime and its replicas, admission and the Git
// server, and the config watcher they all read. The controllers
// (controllers.go: what `knit controller` runs on a cluster) run on
// another, which Options.Restart (SIGHUP) replaces while requests keep
// flowing; they share nothing with the data plane but the API and the
// config Store.
//
// # A restart of the whole process
//
// Replicas are children of knit dev and die with it; they are not adopted.
// What the last run left in the API is made true again before anything
// routes by it (settle.go): the dead replicas' endpoints are deleted and
// the revisions they served point at the activator, which listens on the
// port it had before and holds requests until this run's replicas are
// ready. The ingress listens before the API starts and holds every request
// until it has read its routes, so after a restart requests fail only
// while no knit dev listens at all.
//
// # kubectl logs
//
// With its own API server, knit dev serves the kubelet's log endpoint
// (package podlogs) and registers this machine's Node pointing at it
// (kubeletlogs.go), so the API server's pods/log reaches a replica's log
// file through the runtime. A dockerfile:// build, which runs in BuildKit
// and not in a pod, is mirrored as a Pod in knit-system while it runs and
// for an hour after, its log the build's (buildpods.go). With
// --kubeconfig there is none of this: that API server's kubelet client is
// not knit dev's to trust.
package dev
