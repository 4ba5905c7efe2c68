package main

import (
	"fmt"
	"strings"
)

// The Services the scale part deploys: examples/helloworld's app, each
// with a TARGET of its own so every Service has a template of its own,
// at min-scale 0 and, for the fleet that starts at zero, initial-scale 0.
const (
	scaleImage     = "ko://github.com/knitops/knit/examples/helloworld"
	scaleRepoImage = "ko://./cmd/hello"
)

// fleet is a set of Services the scale part deploys in one namespace.
type fleet struct {
	namespace string
	prefix    string // Services are <prefix>-0001, <prefix>-0002, ...
	count     int
	// initialScale is the replicas each new Revision starts with;
	// 0 needs config-autoscaler's allow-zero-initial-scale.
	initialScale int
	image        string
}

// name is the i-th Service's name, from 1.
func (f fleet) name(i int) string {
	return fmt.Sprintf("%s-%04d", f.prefix, i)
}

// manifests renders the fleet's Services as one multi-document YAML, as
// a user would keep them in a file or a repository; target is what each
// Service's app answers after "Hello " (with the Service's name), so a
// new target is a new Revision of every Service. An empty namespace
// leaves it to the applier (a GitRepository applies into its own).
func (f fleet) manifests(target string) string {
	var b strings.Builder
	for i := 1; i <= f.count; i++ {
		if i > 1 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: %s\n", f.name(i))
		if f.namespace != "" {
			fmt.Fprintf(&b, "  namespace: %s\n", f.namespace)
		}
		fmt.Fprintf(&b, "spec:\n  template:\n    metadata:\n      annotations:\n")
		fmt.Fprintf(&b, "        autoscaling.knative.dev/min-scale: \"0\"\n")
		fmt.Fprintf(&b, "        autoscaling.knative.dev/initial-scale: \"%d\"\n", f.initialScale)
		fmt.Fprintf(&b, "    spec:\n      containers:\n        - image: %s\n", f.image)
		fmt.Fprintf(&b, "          env:\n            - name: TARGET\n              value: %s %s\n", target, f.name(i))
	}
	return b.String()
}
