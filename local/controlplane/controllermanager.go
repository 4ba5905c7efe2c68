package controlplane

// ownedControllers are the kube-controller-manager loops knit dev needs:
// owner references must garbage-collect (a deleted Revision takes its
// Deployment, PodAutoscaler and Services with it), `kubectl delete
// namespace` must finish, and a ResourceQuota must count what its
// namespace uses (the API server refuses pods under a quota whose usage
// nobody has counted). Everything else — Deployments, ReplicaSets,
// EndpointSlices — is the local runtime's job.
const ownedControllers = "garbage-collector-controller,namespace-controller,resourcequota-controller"

// controllerManagerArgs runs kube-controller-manager against the local API
// with the admin kubeconfig, no serving port and no leader election (the
// state-dir lock already makes it the only one).
func controllerManagerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + ownedControllers,
		"--secure-port=0",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--concurrent-gc-syncs=5",
	}
}
