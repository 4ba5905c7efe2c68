//go:build tools

// The packages this module builds but does not import: the conformance
// suite's tests, the e2e feature packages' (which hold nothing but test
// files, so test/e2e, the package they share, stands for what they
// need) and every test image (make conformance-images), so that go.mod
// and go.sum hold what they need.
package main

import (
	_ "knative.dev/serving/test/conformance/api/v1"
	_ "knative.dev/serving/test/conformance/api/v1beta1"
	_ "knative.dev/serving/test/conformance/runtime"
	_ "knative.dev/serving/test/e2e"
	_ "knative.dev/serving/test/test_images/autoscale"
	_ "knative.dev/serving/test/test_images/failing"
	_ "knative.dev/serving/test/test_images/grpc-ping"
	_ "knative.dev/serving/test/test_images/hellohttp2"
	_ "knative.dev/serving/test/test_images/hellovolume"
	_ "knative.dev/serving/test/test_images/helloworld"
	_ "knative.dev/serving/test/test_images/httpproxy"
	_ "knative.dev/serving/test/test_images/multicontainer/servingcontainer"
	_ "knative.dev/serving/test/test_images/multicontainer/sidecarcontainer"
	_ "knative.dev/serving/test/test_images/pizzaplanetv1"
	_ "knative.dev/serving/test/test_images/pizzaplanetv2"
	_ "knative.dev/serving/test/test_images/readiness"
	_ "knative.dev/serving/test/test_images/revisionfailure"
	_ "knative.dev/serving/test/test_images/runtime"
	_ "knative.dev/serving/test/test_images/singlethreaded"
	_ "knative.dev/serving/test/test_images/slowstart"
	_ "knative.dev/serving/test/test_images/timeout"
	_ "knative.dev/serving/test/test_images/volumes"
	_ "knative.dev/serving/test/test_images/wsserver"
)
