// Package e2e holds the user journeys: each test builds the knit binary,
// starts `knit dev` on loopback with its own state dir, and drives it the
// way a user would, with a Kubernetes client, kubectl and HTTP.
package e2e
