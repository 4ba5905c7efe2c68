package main

import (
	"fmt"
	"strings"
	"time"
)

// markdown is the cluster section of the report.
func (c *clusterResult) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## On a real cluster\n\n")
	fmt.Fprintf(&b, "The single-node cluster of `make cluster` (kubelet, containerd 2 with runc, kube-proxy in\n")
	fmt.Fprintf(&b, "iptables mode, all on this machine), knit installed by its chart with the images of\n")
	fmt.Fprintf(&b, "`make cluster-images` (`helm install --wait`: %s), `config-autoscaler` `stable-window: 6s`,\n", c.install.Round(time.Second))
	fmt.Fprintf(&b, "`scale-to-zero-grace-period: 4s`. `%s` serves as a Knative Service and, in the same\n", clusterImage)
	fmt.Fprintf(&b, "round, as a plain pod with an HTTP readiness probe every second. A round waits until the\n")
	fmt.Fprintf(&b, "revision has no pod, times the plain pod's create → Ready (as the API reports it, polled every\n")
	fmt.Fprintf(&b, "10 ms), deletes it, then sends one request through the ingress Service's node port and times\n")
	fmt.Fprintf(&b, "write → first byte (ingress → activator → autoscaler → Deployment scale → scheduler → kubelet →\n")
	fmt.Fprintf(&b, "containers → queue-proxy probe → endpoints → answer).\n\n")
	fmt.Fprintf(&b, "| run | plain pod: create → Ready | knit: request at zero → first byte | knit − plain pod |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|\n")
	for i, r := range c.runs {
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", i+1, fmtColdMs(r.podReady), fmtColdMs(r.ttfb), fmtColdMs(r.ttfb-r.podReady))
	}
	pod, cold := median(c.runs, func(r clusterRun) time.Duration { return r.podReady }), median(c.runs, func(r clusterRun) time.Duration { return r.ttfb })
	fmt.Fprintf(&b, "| **median** | **%s** | **%s** | **%s** |\n", fmtColdMs(pod), fmtColdMs(cold), fmtColdMs(cold-pod))

	fmt.Fprintf(&b, "\nknit's own pods, idle (one revision at zero, no requests), from the kubelet's\n")
	fmt.Fprintf(&b, "`/stats/summary`: working-set memory at the end of a %s window and CPU used during it.\n\n", idleWindow)
	fmt.Fprintf(&b, "| pod | memory | CPU |\n|---|---:|---:|\n")
	var mem uint64
	var cpu time.Duration
	for _, p := range c.idle {
		fmt.Fprintf(&b, "| %s | %.1f MiB | %s |\n", p.name, float64(p.memory)/(1<<20), fmtCPU(p.cpu))
		mem += p.memory
		cpu += p.cpu
	}
	fmt.Fprintf(&b, "| **%d pods** | **%.1f MiB** | **%s** |\n", len(c.idle), float64(mem)/(1<<20), fmtCPU(cpu))
	b.WriteString(c.replicaMarkdown())
	b.WriteString(buildsMarkdown(c.builds))
	b.WriteString(clusterDockerfileMarkdown(c.dockerfile))
	return b.String()
}

// fmtCPU is CPU time over the idle window as millicores.
func fmtCPU(used time.Duration) string {
	return fmt.Sprintf("%.1f mCPU", float64(used)/float64(idleWindow)*1000)
}

// replicaMarkdown is the table of one warm replica's containers.
func (c *clusterResult) replicaMarkdown() string {
	if len(c.replica) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d replicas of helloworld (`%s`, min-scale %d), after %d requests and %s idle, from\n", warmScale, warmService, warmScale, warmRequests, warmIdle)
	fmt.Fprintf(&b, "the same summary: each container's cgroup as the kubelet reads it, what `kubectl top`, a memory\n")
	fmt.Fprintf(&b, "limit and eviction count. Working set is usage less inactive file pages; RSS is the cgroup's\n")
	fmt.Fprintf(&b, "anonymous memory. The pages of an image's files in the page cache are charged to the first\n")
	fmt.Fprintf(&b, "cgroup that reads them and shared by the rest: one replica carries them, and a further one\n")
	fmt.Fprintf(&b, "adds about its RSS. A process's RSS in the tables above counts those shared pages in full.\n\n")
	fmt.Fprintf(&b, "| replica | container | working set | RSS (anon) | usage |\n|---:|---|---:|---:|---:|\n")
	for _, u := range c.replica {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", u.replica, u.name, fmtMiB(u.workingSet), fmtMiB(u.rss), fmtMiB(u.usage))
	}
	return b.String()
}
