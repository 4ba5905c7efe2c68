// Package nodefit is the scheduler's arithmetic for knit dev's one node,
// this machine: whether a pod may go to it and whether it fits there.
//
// Node is this machine as a kubelet would register it (Machine: named by
// its hostname, with the kubelet's labels and the taints asked), and
// Node.Unfit says, in the scheduler's words, why a pod's tolerations,
// nodeSelector or required node affinity keep it off (its TaintToleration
// and NodeAffinity filters). Requests is what a pod asks (PodRequests, as
// the scheduler sums containers, init containers and overhead) or what
// the node gives (MachineAllocatable, FromList), and Insufficient says
// why a pod does not fit beside those placed (NodeResourcesFit).
//
// It holds no state: which replicas are placed, waiting for room and
// reporting a Pod Unschedulable are package runtime's.
package nodefit
