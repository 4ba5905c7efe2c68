package main

// exceptions are the tests a mode fails by design, each with the reason
// docs/conformance.md gives. There are none: knit dev pulls and runs the
// suite's real images, as the cluster's kubelet does, and every test must
// pass in both modes. A test added here must say why.
var exceptions = map[string]map[string]string{
	"dev":     {},
	"cluster": {},
}
