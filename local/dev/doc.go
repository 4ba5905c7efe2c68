// Package dev is `knit dev`, the embedded local mode: it takes the state
// directory, brings up (or connects to) a Kubernetes API, installs knit's
// CRDs, serves and registers the admission webhooks, runs the controller
// manager and the loopback listeners, and tears all of it down again on
// Ctrl-C. It wires rooms together; the work lives in the packages it calls.
package dev
