package main

// exceptions are the tests a mode fails by design, each with the reason
// docs/conformance.md gives. knit dev runs replicas as processes on this
// machine, not in containers: what the runtime contract says of a
// container's own image, users and cgroups has no process equivalent
// there. Cluster mode has none: there every test must pass.
var exceptions = map[string]map[string]string{
	"dev":     {},
	"cluster": {},
}
