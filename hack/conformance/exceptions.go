package main

// exceptions are the tests a mode fails by design, each with the reason
// docs/conformance.md gives, keyed by test name (a subtest's name includes
// its parents'). They cover the conformance packages and the e2e feature
// packages alike: any other failure fails the run. There are none: knit
// dev pulls and runs the suite's real images, as the cluster's kubelet
// does, and every test must pass in both modes. A test added here, of
// either kind, must say why.
var exceptions = map[string]map[string]string{
	"dev":     {},
	"cluster": {},
}
