// Package crds embeds the CustomResourceDefinitions controller-gen writes
// here, so the Helm chart, envtest and `knit dev` install the very same
// files. Helm reads only the YAML in this folder; the Go file is ignored.
package crds

import "embed"

// FS holds every generated CRD manifest (*.yaml).
//
//go:embed *.yaml
var FS embed.FS
