//go:build !unit

package charttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// workloads are the component workloads: kind, name, image name.
var workloads = []struct{ kind, name, image string }{
	{"Deployment", "knit-controller", "knit"},
	{"Deployment", "knit-autoscaler", "knit"},
	{"Deployment", "knit-activator", "knit"},
	{"Deployment", "knit-ingress", "knit"},
	{"StatefulSet", "knit-gitserver", "knit-gitserver"},
}

// The values reach the objects they name: Service types and ports,
// replicas, config-* data, images and flags.
func TestValues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		flags  []string
		values string // a values file's YAML, when not empty
		check  func(t *testing.T, m manifest)
	}{{
		name: "defaults",
		check: func(t *testing.T, m manifest) {
			svc := service(t, m, "knit-ingress")
			want := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intOrName("http"), Protocol: corev1.ProtocolTCP},
				{Name: "https", Port: 443, TargetPort: intOrName("https"), Protocol: corev1.ProtocolTCP}}
			if svc.Spec.Type != corev1.ServiceTypeNodePort || !cmp.Equal(svc.Spec.Ports, want) {
				t.Errorf("knit-ingress Service: type %s, ports %+v; want NodePort, %+v", svc.Spec.Type, svc.Spec.Ports, want)
			}
			internal := service(t, m, "knit-ingress-internal")
			wantInternal := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intOrName("internal"), Protocol: corev1.ProtocolTCP}}
			if internal.Spec.Type != corev1.ServiceTypeClusterIP || !cmp.Equal(internal.Spec.Ports, wantInternal) {
				t.Errorf("knit-ingress-internal Service: type %s, ports %+v; want ClusterIP, %+v", internal.Spec.Type, internal.Spec.Ports, wantInternal)
			}
			for _, name := range []string{"knit-controller", "knit-autoscaler", "knit-activator", "knit-ingress"} {
				if got := *deployment(t, m, name).Spec.Replicas; got != 2 {
					t.Errorf("%s replicas = %d, want 2", name, got)
				}
			}
			images(t, m, "knit.local", "dev")
			wantArgs := map[string][]string{
				"knit-controller": {"controller", "--leader-elect", "--queue-image=knit.local/knit-queue:dev", "--domain=example.com",
					"--gitserver-url=http://knit-gitserver.knit-system.svc:8090", "--gitserver-namespace=default", "--cache-dir=/var/cache/knit", "--git-max-fetch-size=100MiB",
					"--gitops-default-service-account=knit-gitops",
					"--gitops-allowed-kinds=Service.serving.knative.dev,Configuration.serving.knative.dev,Route.serving.knative.dev,ConfigMap,EventSink.knit.dev",
					"--webhook-port=9443", "--webhook-service=knit-webhook", "--webhook-secret=knit-webhook-certs", "-v=0"},
				"knit-autoscaler": {"autoscaler", "run", "--leader-elect", "--listen=:8080", "--internal-key-file=/etc/knit/internal-key/keys", "-v=0"},
				"knit-activator": {"activator", "--listen=:8012", "--autoscaler-url=http://knit-autoscaler.knit-system.svc:8080",
					"--drain-quiet-period=15s", "--internal-key-file=/etc/knit/internal-key/keys", "-v=0"},
				"knit-ingress": {"ingress", "--listen=:8080", "--listen-tls=:8443", "--listen-internal=:8082", "--drain-quiet-period=15s", "--internal-key-file=/etc/knit/internal-key/keys", "-v=0"},
				"knit-gitserver": {"gitserver", "--listen=:8090", "--root=/var/lib/knit/git",
					"--public-url=http://knit-gitserver.knit-system.svc:8090", "--namespace=default", "--plain-http", "--max-push-size=100MiB",
					"--hosts=knit-gitserver,knit-gitserver.knit-system,knit-gitserver.knit-system.svc,knit-gitserver.knit-system.svc.cluster.local", "-v=0"},
			}
			for _, w := range workloads {
				if diff := cmp.Diff(wantArgs[w.name], podSpec(t, m, w.kind, w.name).Containers[0].Args); diff != "" {
					t.Errorf("%s args (-want +got):\n%s", w.name, diff)
				}
			}
			configData(t, m, "config-domain", map[string]string{"example.com": ""})
			configData(t, m, "config-autoscaler", nil)
			// 15s quiet period + Knative's 600s max-revision-timeout-seconds.
			grace(t, m, 615)
			for _, name := range []string{"knit-activator", "knit-ingress"} {
				if m.find("PodDisruptionBudget", name) == nil {
					t.Errorf("no PodDisruptionBudget %s", name)
				}
			}
			var sts appsv1.StatefulSet
			m.into(t, "StatefulSet", "knit-gitserver", &sts)
			if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName != nil ||
				sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "1Gi" {
				t.Errorf("knit-gitserver volumeClaimTemplates = %+v; want one of 1Gi in the default class", sts.Spec.VolumeClaimTemplates)
			}
		},
	}, {
		name: "LoadBalancer",
		flags: []string{"--set", "ingress.service.type=LoadBalancer", "--set", "ingress.service.nodePort=31080", "--set", "ingress.service.httpsNodePort=31443",
			"--set", "ingress.service.loadBalancerIP=192.0.2.10", "--set", "ingress.service.annotations.example\\.com/lb=internal"},
		check: func(t *testing.T, m manifest) {
			svc := service(t, m, "knit-ingress")
			if svc.Spec.Type != corev1.ServiceTypeLoadBalancer || svc.Spec.LoadBalancerIP != "192.0.2.10" ||
				svc.Spec.Ports[0].NodePort != 31080 || svc.Spec.Ports[1].NodePort != 31443 || svc.Annotations["example.com/lb"] != "internal" {
				t.Errorf("knit-ingress Service = %+v %+v", svc.ObjectMeta, svc.Spec)
			}
		},
	}, {
		name:  "ClusterIP ignores nodePort",
		flags: []string{"--set", "ingress.service.type=ClusterIP", "--set", "ingress.service.nodePort=31080"},
		check: func(t *testing.T, m manifest) {
			svc := service(t, m, "knit-ingress")
			if svc.Spec.Type != corev1.ServiceTypeClusterIP || svc.Spec.Ports[0].NodePort != 0 {
				t.Errorf("knit-ingress Service: type %s, nodePort %d; want ClusterIP, none", svc.Spec.Type, svc.Spec.Ports[0].NodePort)
			}
		},
	}, {
		name:  "ingress fast path off",
		flags: []string{"--set", "ingress.disableFastPath=true"},
		check: func(t *testing.T, m manifest) {
			if args := podSpec(t, m, "Deployment", "knit-ingress").Containers[0].Args; !slices.Contains(args, "--disable-fast-path") {
				t.Errorf("knit-ingress args %q lack --disable-fast-path", args)
			}
		},
	}, {
		name:  "replicas",
		flags: []string{"--set", "controller.replicas=3", "--set", "autoscaler.replicas=1", "--set", "activator.replicas=1", "--set", "ingress.replicas=4"},
		check: func(t *testing.T, m manifest) {
			for name, want := range map[string]int32{"knit-controller": 3, "knit-autoscaler": 1, "knit-activator": 1, "knit-ingress": 4} {
				if got := *deployment(t, m, name).Spec.Replicas; got != want {
					t.Errorf("%s replicas = %d, want %d", name, got, want)
				}
			}
			// One activator: a PDB of minAvailable 1 would block every drain.
			if m.find("PodDisruptionBudget", "knit-activator") != nil || m.find("PodDisruptionBudget", "knit-ingress") == nil {
				t.Error("want a PodDisruptionBudget for the 4 ingresses and none for the single activator")
			}
		},
	}, {
		name: "config overrides",
		// --set for what a flag says well (its numbers and booleans are not
		// strings), a values file for the rest.
		flags: []string{"--set", "config.autoscaler.enable-scale-to-zero=false", "--set", "config.gc.min-non-active-revisions=5",
			"--set", "config.defaults.max-revision-timeout-seconds=900", "--set", "logLevel=2"},
		values: `
domain: apps.example.com
drainQuietPeriod: 1m
config:
  autoscaler:
    stable-window: 30s
  network:
    domain-template: "{{.Name}}-{{.Namespace}}.{{.Domain}}"
  domain:
    internal.example.org: |
      selector:
        visibility: internal
`,
		check: func(t *testing.T, m manifest) {
			// Numbers and booleans arrive as the strings knit parses.
			configData(t, m, "config-autoscaler", map[string]string{"stable-window": "30s", "enable-scale-to-zero": "false"})
			configData(t, m, "config-gc", map[string]string{"min-non-active-revisions": "5"})
			configData(t, m, "config-network", map[string]string{"domain-template": "{{.Name}}-{{.Namespace}}.{{.Domain}}"})
			configData(t, m, "config-defaults", map[string]string{"max-revision-timeout-seconds": "900"})
			configData(t, m, "config-domain", map[string]string{"apps.example.com": "", "internal.example.org": "selector:\n  visibility: internal\n"})
			grace(t, m, 960)
			args := podSpec(t, m, "Deployment", "knit-controller").Containers[0].Args
			if !slices.Contains(args, "--domain=apps.example.com") || !slices.Contains(args, "-v=2") {
				t.Errorf("controller args %q: want --domain=apps.example.com and -v=2", args)
			}
			if args := podSpec(t, m, "Deployment", "knit-ingress").Containers[0].Args; !slices.Contains(args, "--drain-quiet-period=1m") {
				t.Errorf("ingress args %q: want --drain-quiet-period=1m", args)
			}
		},
	}, {
		name:  "no domain",
		flags: []string{"--set", "domain="},
		check: func(t *testing.T, m manifest) {
			configData(t, m, "config-domain", nil)
			for _, a := range podSpec(t, m, "Deployment", "knit-controller").Containers[0].Args {
				if strings.HasPrefix(a, "--domain") {
					t.Errorf("controller has %s; want no --domain without a domain", a)
				}
			}
		},
	}, {
		name:  "image repository and tag",
		flags: []string{"--set", "image.repository=registry.example.com/knit/", "--set", "image.tag=v1.2.3", "--set", "image.pullPolicy=Always"},
		check: func(t *testing.T, m manifest) {
			images(t, m, "registry.example.com/knit", "v1.2.3")
			for _, w := range workloads {
				if p := podSpec(t, m, w.kind, w.name).Containers[0].ImagePullPolicy; p != corev1.PullAlways {
					t.Errorf("%s imagePullPolicy = %s, want Always", w.name, p)
				}
			}
		},
	}, {
		name: "gitserver without a volume claim",
		flags: []string{"--set", "gitserver.persistent=false", "--set", "gitserver.deployNamespace=apps", "--set", "gitserver.service.type=NodePort", "--set", "gitserver.service.nodePort=30090",
			"--set", "gitserver.hosts={git.example.com,git.internal}"},
		check: func(t *testing.T, m manifest) {
			var sts appsv1.StatefulSet
			m.into(t, "StatefulSet", "knit-gitserver", &sts)
			if len(sts.Spec.VolumeClaimTemplates) != 0 || !slices.ContainsFunc(sts.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
				return v.Name == "data" && v.EmptyDir != nil
			}) {
				t.Errorf("knit-gitserver: want an emptyDir named data and no claim, got claims %d, volumes %+v",
					len(sts.Spec.VolumeClaimTemplates), sts.Spec.Template.Spec.Volumes)
			}
			if !slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--namespace=apps") {
				t.Errorf("gitserver args %q: want --namespace=apps", sts.Spec.Template.Spec.Containers[0].Args)
			}
			if !slices.Contains(sts.Spec.Template.Spec.Containers[0].Args, "--hosts=knit-gitserver,knit-gitserver.knit-system,"+
				"knit-gitserver.knit-system.svc,knit-gitserver.knit-system.svc.cluster.local,git.example.com,git.internal") {
				t.Errorf("gitserver args %q: want gitserver.hosts after the Service's names in --hosts", sts.Spec.Template.Spec.Containers[0].Args)
			}
			if svc := service(t, m, "knit-gitserver"); svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Ports[0].NodePort != 30090 {
				t.Errorf("knit-gitserver Service: type %s, nodePort %d", svc.Spec.Type, svc.Spec.Ports[0].NodePort)
			}
		},
	}, {
		name: "gitserver over TLS, repositories assigned to namespaces",
		flags: []string{"--set", "gitserver.tls.secretName=gitserver-tls", "--set", "gitserver.repositoryNamespaces.shop=team-a",
			"--set", "gitserver.repositoryNamespaces.blog=team-b"},
		check: func(t *testing.T, m manifest) {
			var sts appsv1.StatefulSet
			m.into(t, "StatefulSet", "knit-gitserver", &sts)
			args := sts.Spec.Template.Spec.Containers[0].Args
			for _, want := range []string{"--public-url=https://knit-gitserver.knit-system.svc:8090", "--repository-namespaces=blog=team-b,shop=team-a",
				"--tls-cert-file=/etc/knit/tls/tls.crt", "--tls-key-file=/etc/knit/tls/tls.key"} {
				if !slices.Contains(args, want) {
					t.Errorf("gitserver args %q: want %s", args, want)
				}
			}
			if slices.Contains(args, "--plain-http") {
				t.Errorf("gitserver args %q: --plain-http with TLS", args)
			}
			ctrl := deployment(t, m, "knit-controller").Spec.Template.Spec.Containers[0]
			for _, want := range []string{"--gitserver-url=https://knit-gitserver.knit-system.svc:8090", "--gitserver-repository-namespaces=blog=team-b,shop=team-a"} {
				if !slices.Contains(ctrl.Args, want) {
					t.Errorf("controller args %q: want %s", ctrl.Args, want)
				}
			}
			if !slices.ContainsFunc(ctrl.Env, func(e corev1.EnvVar) bool {
				return e.Name == "SSL_CERT_DIR" && strings.HasPrefix(e.Value, "/etc/knit/gitserver-ca")
			}) {
				t.Errorf("controller env %+v: want SSL_CERT_DIR with the Git server's CA", ctrl.Env)
			}
		},
	}, {
		name:  "gitserver storage class",
		flags: []string{"--set", "gitserver.storageClassName=fast", "--set", "gitserver.storage=5Gi"},
		check: func(t *testing.T, m manifest) {
			var sts appsv1.StatefulSet
			m.into(t, "StatefulSet", "knit-gitserver", &sts)
			claim := sts.Spec.VolumeClaimTemplates[0].Spec
			if claim.StorageClassName == nil || *claim.StorageClassName != "fast" || claim.Resources.Requests.Storage().String() != "5Gi" {
				t.Errorf("knit-gitserver claim = %+v; want 5Gi of class fast", claim)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			flags := tc.flags
			if tc.values != "" {
				file := filepath.Join(t.TempDir(), "values.yaml")
				if err := os.WriteFile(file, []byte(tc.values), 0o644); err != nil {
					t.Fatal(err)
				}
				flags = append(flags, "--values", file)
			}
			m := render(t, flags...)
			tc.check(t, m)
			secured(t, m)
			labelled(t, m)
		})
	}
}

// labelled: every object carries the five app.kubernetes.io labels, and
// each component's pods app.kubernetes.io/name=knit-<component>, which
// users and the cluster journeys select them by.
func labelled(t *testing.T, m manifest) {
	t.Helper()
	for _, o := range m {
		for _, k := range []string{"name", "instance", "component", "part-of", "managed-by"} {
			if o.GetLabels()["app.kubernetes.io/"+k] == "" {
				t.Errorf("%s %s has no label app.kubernetes.io/%s", o.GetKind(), o.GetName(), k)
			}
		}
	}
	for _, w := range workloads {
		var tmpl struct {
			Spec struct {
				Selector *metav1.LabelSelector
				Template corev1.PodTemplateSpec
			}
		}
		b, _ := json.Marshal(m.find(w.kind, w.name).Object)
		if err := json.Unmarshal(b, &tmpl); err != nil {
			t.Fatal(err)
		}
		l := tmpl.Spec.Template.Labels
		if l["app.kubernetes.io/name"] != w.name || l["app.kubernetes.io/part-of"] != "knit" ||
			tmpl.Spec.Selector.MatchLabels["app.kubernetes.io/name"] != w.name {
			t.Errorf("%s pods are labelled %v, selected by %v; want app.kubernetes.io/name=%s, part-of=knit", w.name, l, tmpl.Spec.Selector.MatchLabels, w.name)
		}
	}
}

// secured: every component's pod runs as 65532 under RuntimeDefault
// seccomp, read-only, without privileges, with probes on 8081 and
// metrics on 9090, whatever the values.
func secured(t *testing.T, m manifest) {
	t.Helper()
	for _, w := range workloads {
		spec := podSpec(t, m, w.kind, w.name)
		psc := spec.SecurityContext
		if psc == nil || !*psc.RunAsNonRoot || *psc.RunAsUser != 65532 || *psc.RunAsGroup != 65532 || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s pod securityContext = %+v", w.name, psc)
		}
		if spec.ServiceAccountName != w.name {
			t.Errorf("%s runs as ServiceAccount %q, want its own", w.name, spec.ServiceAccountName)
		}
		c := spec.Containers[0]
		sc := c.SecurityContext
		if sc == nil || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || !cmp.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("%s container securityContext = %+v", w.name, sc)
		}
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		if ports["probes"] != 8081 || ports["metrics"] != 9090 ||
			c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("%s ports %v, probes %s %s", w.name, ports, c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
		}
		var env []string
		memLimit := ""
		for _, e := range c.Env {
			if e.Name == "GOMEMLIMIT" {
				memLimit = e.Value
			}
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
				continue // not the downward API's, checked where set
			}
			env = append(env, e.Name+"="+e.ValueFrom.FieldRef.FieldPath)
		}
		if diff := cmp.Diff([]string{"POD_NAME=metadata.name", "POD_NAMESPACE=metadata.namespace", "POD_IP=status.podIP"}, env); diff != "" {
			t.Errorf("%s env (-want +got):\n%s", w.name, diff)
		}
		// Go collects garbage harder near GOMEMLIMIT, a tenth under the
		// limit the kernel kills at.
		if want := fmt.Sprint(c.Resources.Limits.Memory().Value() * 9 / 10); memLimit != want {
			t.Errorf("%s GOMEMLIMIT = %q, want %s, 90%% of its memory limit", w.name, memLimit, want)
		}
		if !slices.ContainsFunc(c.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == "/tmp" }) {
			t.Errorf("%s has no /tmp", w.name)
		}
		if c.Resources.Limits.Memory().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("%s resources = %+v; want memory requests and limits", w.name, c.Resources)
		}
	}
}

// images checks every workload's image and the queue-proxy image the
// controller gives Revisions.
func images(t *testing.T, m manifest, repo, tag string) {
	t.Helper()
	for _, w := range workloads {
		want := fmt.Sprintf("%s/%s:%s", repo, w.image, tag)
		if got := podSpec(t, m, w.kind, w.name).Containers[0].Image; got != want {
			t.Errorf("%s image = %s, want %s", w.name, got, want)
		}
	}
	queue := fmt.Sprintf("--queue-image=%s/knit-queue:%s", repo, tag)
	if args := podSpec(t, m, "Deployment", "knit-controller").Containers[0].Args; !slices.Contains(args, queue) {
		t.Errorf("controller args %q: want %s", args, queue)
	}
}

// grace checks the request path's terminationGracePeriodSeconds.
func grace(t *testing.T, m manifest, want int64) {
	t.Helper()
	for _, name := range []string{"knit-activator", "knit-ingress"} {
		if got := podSpec(t, m, "Deployment", name).TerminationGracePeriodSeconds; got == nil || *got != want {
			t.Errorf("%s terminationGracePeriodSeconds = %v, want %d", name, got, want)
		}
	}
}

// configData checks a ConfigMap's data is exactly want (nil: empty).
func configData(t *testing.T, m manifest, name string, want map[string]string) {
	t.Helper()
	var cm corev1.ConfigMap
	m.into(t, "ConfigMap", name, &cm)
	if cm.Namespace != "knit-system" {
		t.Errorf("ConfigMap %s is in %q, want knit-system", name, cm.Namespace)
	}
	if len(want) == 0 && len(cm.Data) == 0 {
		return
	}
	if diff := cmp.Diff(want, cm.Data); diff != "" {
		t.Errorf("ConfigMap %s data (-want +got):\n%s", name, diff)
	}
}

func deployment(t *testing.T, m manifest, name string) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	m.into(t, "Deployment", name, d)
	return d
}

func service(t *testing.T, m manifest, name string) *corev1.Service {
	t.Helper()
	s := &corev1.Service{}
	m.into(t, "Service", name, s)
	return s
}

func podSpec(t *testing.T, m manifest, kind, name string) corev1.PodSpec {
	t.Helper()
	if kind == "StatefulSet" {
		s := &appsv1.StatefulSet{}
		m.into(t, kind, name, s)
		return s.Spec.Template.Spec
	}
	return deployment(t, m, name).Spec.Template.Spec
}

func intOrName(name string) intstr.IntOrString { return intstr.FromString(name) }
