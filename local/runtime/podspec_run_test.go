//go:build !unit

package runtime

import (
	"context"
	"fmt"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/local/view"
)

// needMounts skips a test of containers' views when knit dev is not
// root, and fails it when it is root but cannot make them.
func needMounts(t *testing.T) {
	t.Helper()
	if err := view.Supported(); err != nil {
		if os.Geteuid() != 0 {
			t.Skipf("needs root: containers get views of their own through mount namespaces (%v)", err)
		}
		t.Fatalf("root, but containers cannot get views of their own: %v", err)
	}
}

// The pod's hostAliases and DNS settings, as a replica's containers read
// them: hostAliases after the kubelet's entries under its comment, in an
// image's container and in a process of this machine (knit://), whose
// hosts file is this machine's under the kubelet's host-network header;
// dnsPolicy None with a dnsConfig, its resolv.conf that alone.
func TestHostAliasesAndDNSConfig(t *testing.T) {
	startSuite(t)
	image := suiteImage(t)
	needMounts(t)
	t.Parallel()
	ns := newNamespace(t)
	aliases := []corev1.HostAlias{{IP: "10.9.8.7", Hostnames: []string{"db.internal", "cache.internal"}}}
	dns := &corev1.PodDNSConfig{
		Nameservers: []string{"10.9.0.53"}, Searches: []string{"svc.example"},
		Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}},
	}
	const wantResolv = "search svc.example\nnameserver 10.9.0.53\noptions ndots:2\n"
	const wantAliases = "\n# Entries added by HostAliases.\n10.9.8.7\tdb.internal\tcache.internal\n"
	for _, tc := range []struct{ name, image, header string }{
		{"image", image, "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n"},
		{"process", "knit://serve", "# Kubernetes-managed hosts file (host network).\n" + string(readHostFile(hostHosts))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := appContainer(tc.image)
			if tc.image == image {
				app.Command = []string{"/app/httpserver"}
			}
			d := revisionDeployment(ns, "names-"+tc.name, 1, app)
			d.Spec.Template.Spec.HostAliases = aliases
			d.Spec.Template.Spec.DNSPolicy, d.Spec.Template.Spec.DNSConfig = corev1.DNSNone, dns
			port := serve(t, d)
			status, hosts, _ := fileAt(t, http.MethodGet, port, "/etc/hosts", "")
			if status != http.StatusOK || !strings.HasPrefix(hosts, tc.header) || !strings.HasSuffix(hosts, wantAliases) {
				t.Errorf("/etc/hosts = %d\n%s\nwant it to start with\n%s\nand end with%s", status, hosts, tc.header, wantAliases)
			}
			if status, resolv, _ := fileAt(t, http.MethodGet, port, "/etc/resolv.conf", ""); status != http.StatusOK || resolv != wantResolv {
				t.Errorf("/etc/resolv.conf = %d %q, want %q", status, resolv, wantResolv)
			}
		})
	}
	if hosts := string(readHostFile(hostHosts)); strings.Contains(hosts, "db.internal") {
		t.Errorf("this machine's /etc/hosts got the pod's aliases:\n%s", hosts)
	}
}

// waitUnschedulable waits for the namespace's one Pod to be Pending,
// PodScheduled False, Unschedulable, with message.
func waitUnschedulable(t *testing.T, ns, message string) {
	t.Helper()
	eventually(t, 30*time.Second, "an Unschedulable Pod: "+message, func() (bool, string) {
		pods := podsOf(t, ns)
		if len(pods) != 1 {
			return false, fmt.Sprintf("%d pods", len(pods))
		}
		p := pods[0]
		c := podConditionOf(&p, corev1.PodScheduled)
		ok := c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message == message
		return ok && p.Status.Phase == corev1.PodPending, fmt.Sprintf("phase %s, conditions %+v", p.Status.Phase, p.Status.Conditions)
	})
}

// A pod whose nodeSelector this machine's labels do not match stays
// Pending in the scheduler's words, runs nothing and takes no room; one
// whose required node affinity matches the labels a kubelet registers
// runs.
func TestNodeSelectorAndAffinity(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	d := revisionDeployment(ns, "placed", 1, appContainer("knit://serve"))
	d.Spec.Template.Spec.NodeSelector = map[string]string{"disktype": "ssd"}
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	waitUnschedulable(t, ns, "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.")
	time.Sleep(time.Second)
	if pids, placed := replicaPIDs(key), placedReplicas(key); len(pids) != 0 || placed != 0 {
		t.Errorf("a pod no node matches runs processes %v, %d placed", pids, placed)
	}
	if err := suite.client.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
	if c := condition(d, appsv1.DeploymentReplicaFailure); c != nil || available(d) {
		t.Errorf("an unscheduled replica: ReplicaFailure %+v, status %+v", c, d.Status)
	}

	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelOSStable: goruntime.GOOS}
	d.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{goruntime.GOARCH}}},
		}}},
	}}
	if err := suite.client.Patch(ctx, d, patch); err != nil {
		t.Fatal(err)
	}
	waitForDeployment(t, key, time.Minute, "available once the node matches", available)
}

// runtimeClass makes a RuntimeClass for the test, removed after it.
func runtimeClass(t *testing.T, name, handler string) {
	t.Helper()
	create(t, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler})
}

// A pod's runtimeClassName as the API server and the kubelet take it:
// one that does not exist is refused (FailedCreate, the RuntimeClass
// admission plugin's words); one whose handler is not runc, knit dev's
// only one, never gets a sandbox (Pending, FailedCreatePodSandBox in the
// kubelet's and containerd's words) until the template changes; one whose
// handler is runc runs.
func TestRuntimeClass(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ctx := context.Background()
	ns := newNamespace(t)
	kata, runc := ns+"-kata", ns+"-runc"
	runtimeClass(t, kata, "kata")
	runtimeClass(t, runc, "runc")

	d := revisionDeployment(ns, "classy", 1, appContainer("knit://serve"))
	d.Spec.Template.Spec.RuntimeClassName = ptr.To(ns + "-missing")
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	got := waitForDeployment(t, key, 30*time.Second, "FailedCreate", failingWith(ReasonFailedCreate))
	if c := condition(got, appsv1.DeploymentReplicaFailure); !strings.Contains(c.Message, fmt.Sprintf("RuntimeClass %q not found", ns+"-missing")) {
		t.Errorf("FailedCreate message %q, want the admission plugin's RuntimeClass not found", c.Message)
	}

	setRuntimeClass(t, d, kata)
	got = waitForDeployment(t, key, time.Minute, ReasonFailedCreatePodSandBox, failingWith(ReasonFailedCreatePodSandBox))
	want := `Failed to create pod sandbox: rpc error: code = Unknown desc = unable to get OCI runtime for sandbox`
	if c := condition(got, appsv1.DeploymentReplicaFailure); !strings.HasPrefix(c.Message, want) || !strings.Contains(c.Message, `no runtime for "kata" is configured`) {
		t.Errorf("message %q, want the kubelet's and containerd's words", c.Message)
	}
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Errorf("a pod without a sandbox runs processes %v", pids)
	}
	// The pod's status is written apart from the Deployment's condition,
	// and may come a moment later.
	eventually(t, 30*time.Second, "the pod waiting "+ReasonFailedCreatePodSandBox, func() (bool, string) {
		pod := onlyPodOf(t, ns, got)
		return pod.Status.Phase == corev1.PodPending && len(pod.Status.ContainerStatuses) == 1 && pod.Status.ContainerStatuses[0].State.Waiting != nil &&
				pod.Status.ContainerStatuses[0].State.Waiting.Reason == ReasonFailedCreatePodSandBox,
			fmt.Sprintf("pod %s, containers %+v", pod.Status.Phase, pod.Status.ContainerStatuses)
	})

	setRuntimeClass(t, d, runc)
	waitForDeployment(t, key, time.Minute, "available with handler runc", func(d *appsv1.Deployment) bool {
		return available(d) && condition(d, appsv1.DeploymentReplicaFailure) == nil
	})
	if err := suite.client.Get(ctx, key, d); err != nil {
		t.Fatal(err)
	}
}

// setRuntimeClass changes d's template's runtimeClassName.
func setRuntimeClass(t *testing.T, d *appsv1.Deployment, name string) {
	t.Helper()
	if err := suite.client.Get(context.Background(), client.ObjectKeyFromObject(d), d); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Template.Spec.RuntimeClassName = ptr.To(name)
	if err := suite.client.Patch(context.Background(), d, patch); err != nil {
		t.Fatal(err)
	}
}

// onlyPodOf is the one Pod of d's current template in ns.
func onlyPodOf(t *testing.T, ns string, d *appsv1.Deployment) corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	eventually(t, 30*time.Second, "one pod of the current template", func() (bool, string) {
		var n int
		for _, p := range podsOf(t, ns) {
			if p.Spec.RuntimeClassName != nil && *p.Spec.RuntimeClassName == *d.Spec.Template.Spec.RuntimeClassName && p.DeletionTimestamp == nil {
				pod, n = p, n+1
			}
		}
		return n == 1 && len(pod.Status.ContainerStatuses) > 0, fmt.Sprintf("%d pods", n)
	})
	return pod
}

// A priorityClassName the API server does not know refuses the Pod, as
// the Priority admission plugin does (FailedCreate, its words, no
// process); once the class exists the replica runs, its Pod with the
// class's priority.
func TestPriorityClass(t *testing.T) {
	startSuite(t)
	t.Parallel()
	ns := newNamespace(t)
	class := ns + "-high"
	d := revisionDeployment(ns, "urgent", 1, appContainer("knit://serve"))
	d.Spec.Template.Spec.PriorityClassName = class
	create(t, d)
	key := client.ObjectKeyFromObject(d)
	got := waitForDeployment(t, key, 30*time.Second, "FailedCreate", failingWith(ReasonFailedCreate))
	if c := condition(got, appsv1.DeploymentReplicaFailure); !strings.Contains(c.Message, "no PriorityClass with name "+class+" was found") {
		t.Errorf("FailedCreate message %q, want the Priority admission plugin's", c.Message)
	}
	if pids := replicaPIDs(key); len(pids) != 0 {
		t.Errorf("a refused pod runs processes %v", pids)
	}

	create(t, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Value: 1000})
	waitForDeployment(t, key, time.Minute, "available once the class exists", func(d *appsv1.Deployment) bool {
		return available(d) && condition(d, appsv1.DeploymentReplicaFailure) == nil
	})
	pod := onlyPod(t, ns, "urgent")
	if pod.Spec.Priority == nil || *pod.Spec.Priority != 1000 {
		t.Errorf("the Pod's priority %v, want the class's 1000", pod.Spec.Priority)
	}
}

// With shareProcessNamespace the containers of a replica's images share
// one PID namespace, whose PID 1 is the replica's pause process, as the
// pause container is on a node: the app sees its sidecar's process, and
// is not PID 1 itself.
func TestSharedProcessNamespace(t *testing.T) {
	startSuite(t)
	image := suiteImage(t)
	t.Parallel()
	ns := newNamespace(t)
	shared := corev1.VolumeMount{Name: "data", MountPath: "/shared"}
	app := appContainer(image, "/app/httpserver")
	app.VolumeMounts = []corev1.VolumeMount{shared}
	// $$$$ is the shell's $$, once Kubernetes has expanded $$ to $.
	sidecar := corev1.Container{Name: "sidecar", Image: image, VolumeMounts: []corev1.VolumeMount{shared},
		Command: []string{"/bin/sh", "-c", "echo -n $$$$ > /shared/pid; exec sleep 1000"}}
	d := revisionDeployment(ns, "together", 1, app, sidecar)
	d.Spec.Template.Spec.ShareProcessNamespace = ptr.To(true)
	d.Spec.Template.Spec.Volumes = []corev1.Volume{dataVolume}
	port := serve(t, d)

	if status, cmdline, _ := fileAt(t, http.MethodGet, port, "/proc/1/cmdline", ""); status != http.StatusOK || !strings.HasPrefix(cmdline, "knit-pause") {
		t.Errorf("PID 1 of the app's namespace runs %d %q, want the pause process", status, cmdline)
	}
	var pid string
	eventually(t, 30*time.Second, "the sidecar's pid", func() (bool, string) {
		status, body, _ := fileAt(t, http.MethodGet, port, "/shared/pid", "")
		pid = body
		return status == http.StatusOK && pid != "", body
	})
	if status, cmdline, _ := fileAt(t, http.MethodGet, port, "/proc/"+pid+"/cmdline", ""); status != http.StatusOK || !strings.HasPrefix(cmdline, "sleep") {
		t.Errorf("the app reads the sidecar's process %s: %d %q, want its sleep", pid, status, cmdline)
	}
}
