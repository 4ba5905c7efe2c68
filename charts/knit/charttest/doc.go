// Package charttest checks the Helm chart in charts/knit with the real
// tools: helm lint and helm template from ./bin/helm (make helm), and a
// real kube-apiserver (envtest, from $KUBEBUILDER_ASSETS, make tools) that
// dry-runs every object, installs the RBAC and answers, for each
// component's ServiceAccount, exactly what the component's code does. It
// also holds the chart's webhook configurations to webhooks.Configurations,
// so the chart and the Go code cannot drift apart.
//
// Without ./bin/helm or $KUBEBUILDER_ASSETS the tests that need them skip,
// saying which `make` target provides it; `make test` and `make chart-test`
// provide both.
package charttest
