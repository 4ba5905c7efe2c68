package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

func TestPreviewName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		number int64
		want   string
	}{
		{"hello", 1, "hello-pr-1"},
		{"hello-config", 42, "hello-config-pr-42"},
		{"hello-staging", 7, "hello-staging-pr-7"},
		{strings.Repeat("a", 60), 12, ""}, // shortened with a hash
	} {
		got := PreviewName(tc.name, tc.number)
		if len(got) > 63 {
			t.Errorf("PreviewName(%.10s…, %d) = %q: longer than a DNS label", tc.name, tc.number, got)
		}
		if !strings.HasSuffix(got, "-pr-"+strings.TrimPrefix(Tag(tc.number), "pr-")) {
			t.Errorf("PreviewName(%q, %d) = %q, want the pull request's suffix kept", tc.name, tc.number, got)
		}
		if tc.want != "" && got != tc.want {
			t.Errorf("PreviewName(%q, %d) = %q, want %q", tc.name, tc.number, got, tc.want)
		}
	}
	if a, b := PreviewName(strings.Repeat("a", 60)+"x", 1), PreviewName(strings.Repeat("a", 60)+"y", 1); a == b {
		t.Errorf("two long names share preview name %q", a)
	}
}

const configV1 = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-config
data:
  greeting: hi
`

const configV2 = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-config
  labels: {team: web}
immutable: true
data:
  greeting: hello
`

const configRelabelled = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-config
  labels: {team: web}
data:
  greeting: hi
`

const sinkYAML = `
apiVersion: knit.dev/v1alpha1
kind: EventSink
metadata:
  name: ci
spec:
  uri: https://ci.example.com/%s
`

const readsConfigYAML = `
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: %s
spec:
  traffic: [{latestRevision: true, percent: 100}]
  template:
    metadata:
      name: chosen-in-git
    spec:
      containers:
        - image: example.com/app
          envFrom: [{configMapRef: {name: hello-config}}]
          env:
            - name: SECRET
              valueFrom: {secretKeyRef: {name: hello-config, key: k}}
      volumes:
        - name: other
          configMap: {name: other-config}
`

func previewHead() Commit {
	return Commit{Repository: "hello", Namespace: "default", Branch: "feature", SHA: sha2, Author: "Ada <ada@example.com>", Message: "Try\n\nbody"}
}

func planPreview(t *testing.T, base, head []string, main bool) (*Preview, error) {
	t.Helper()
	docs := func(ss []string) []*unstructured.Unstructured {
		var out []*unstructured.Unstructured
		for _, s := range ss {
			out = append(out, parse(t, s))
		}
		return out
	}
	baseBranch := "main"
	if !main {
		baseBranch = "staging"
	}
	return PlanPreview(PreviewInput{Head: previewHead(), Number: 3, BaseBranch: baseBranch, BaseMain: main, Base: docs(base), Rendered: docs(head)})
}

func kindNames(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+" "+o.GetName())
	}
	return out
}

func TestPlanPreview(t *testing.T) {
	svc := func(name string) string { return strings.Replace(readsConfigYAML, "%s", name, 1) }
	sink := func(path string) string { return strings.Replace(sinkYAML, "%s", path, 1) }
	for _, tc := range []struct {
		name                     string
		base, head               []string
		main                     bool
		existing, services, copy []string
		envFrom                  string // where the first Service's envFrom points
	}{
		{name: "a head that changes no Service previews the base's as they are", main: true,
			base: []string{svc("hello"), configV1}, head: []string{svc("hello"), configV1},
			existing: []string{"Service hello"}, envFrom: "hello-config"},
		{name: "a changed Service is previewed", main: true,
			base: []string{svc("hello"), configV1}, head: []string{strings.Replace(svc("hello"), "example.com/app", "example.com/app:2", 1), configV1},
			existing: []string{"Service hello"}, envFrom: "hello-config"},
		{name: "a changed ConfigMap is copied and read by the preview", main: true,
			base: []string{svc("hello"), configV1}, head: []string{svc("hello"), configV2},
			existing: []string{"Service hello"}, copy: []string{"ConfigMap hello-config-pr-3"}, envFrom: "hello-config-pr-3"},
		{name: "labels alone are no change", main: true,
			base: []string{svc("hello"), svc("other"), configV1}, head: []string{svc("hello"), strings.Replace(svc("other"), "app", "app:2", 1), configRelabelled},
			existing: []string{"Service other"}, envFrom: "hello-config"},
		{name: "an added ConfigMap is copied", main: true,
			base: []string{svc("hello")}, head: []string{svc("hello"), configV1},
			existing: []string{"Service hello"}, copy: []string{"ConfigMap hello-config-pr-3"}, envFrom: "hello-config-pr-3"},
		{name: "an added Service gets a preview Service", main: true,
			base: []string{configV1}, head: []string{svc("api"), configV1},
			services: []string{"Service api-pr-3"}, envFrom: "hello-config"},
		{name: "an added Service alone leaves the base's unpreviewed", main: true,
			base: []string{svc("hello"), configV1}, head: []string{svc("hello"), svc("api"), configV1},
			services: []string{"Service api-pr-3"}, envFrom: "hello-config"},
		{name: "named as the merge would name it on another branch", main: false,
			base: []string{svc("hello")}, head: []string{svc("hello"), svc("api"), configV2},
			existing: []string{"Service hello"}, services: []string{"Service api-staging-pr-3"}, copy: []string{"ConfigMap hello-config-pr-3"},
			envFrom: "hello-config-pr-3"},
		{name: "a changed EventSink is copied", main: true,
			base: []string{svc("hello"), sink("a")}, head: []string{svc("hello"), sink("b")},
			existing: []string{"Service hello"}, copy: []string{"EventSink ci-pr-3"}, envFrom: "hello-config"},
		{name: "an unchanged EventSink is not", main: true,
			base: []string{svc("hello"), sink("a")}, head: []string{svc("hello"), sink("a")},
			existing: []string{"Service hello"}, envFrom: "hello-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := planPreview(t, tc.base, tc.head, tc.main)
			if err != nil {
				t.Fatal(err)
			}
			for what, d := range map[string]string{
				"existing": cmp.Diff(tc.existing, kindNames(p.Existing)),
				"services": cmp.Diff(tc.services, kindNames(p.Services)),
				"copies":   cmp.Diff(tc.copy, kindNames(p.Copies)),
			} {
				if d != "" {
					t.Errorf("%s (-want +got):\n%s", what, d)
				}
			}
			svcs := append(append([]*unstructured.Unstructured{}, p.Existing...), p.Services...)
			if len(svcs) == 0 {
				return
			}
			spec := serviceOfT(t, svcs[0]).Spec.Template.Spec
			if got := spec.Containers[0].EnvFrom[0].ConfigMapRef.Name; got != tc.envFrom {
				t.Errorf("envFrom reads %q, want %q", got, tc.envFrom)
			}
			if got := spec.Containers[0].Env[0].ValueFrom.SecretKeyRef.Name; got != "hello-config" {
				t.Errorf("a Secret reference was rewritten to %q", got)
			}
			for _, o := range append(p.Copies, p.Services...) {
				l := o.GetLabels()
				if l[PullRequestLabel] != "3" || l[RepositoryLabel] != "hello" || l[BranchLabel] != "feature" || o.GetNamespace() != "default" {
					t.Errorf("%s %s: labels %v, namespace %q", o.GetKind(), o.GetName(), l, o.GetNamespace())
				}
			}
		})
	}
}

// TestPlanPreviewSources: a Service built from the repository is
// previewed when the head changes its sources, even with the same YAML.
func TestPlanPreviewSources(t *testing.T) {
	ko := strings.Replace(strings.Replace(readsConfigYAML, "%s", "hello", 1), "example.com/app", "ko://./cmd/hello", 1)
	image := strings.Replace(readsConfigYAML, "%s", "hello", 1)
	for _, tc := range []struct {
		name, doc, baseSource, headSource string
		want                              int
	}{
		{"ko, sources changed", ko, "a", "b", 1},
		{"ko, sources unchanged", ko, "a", "a", 0},
		{"an image, sources changed", image, "a", "b", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Service other changes in every case, so hello is previewed
			// only when it changes too.
			other := strings.Replace(readsConfigYAML, "%s", "other", 1)
			p, err := PlanPreview(PreviewInput{Head: previewHead(), Number: 3, BaseBranch: "main", BaseMain: true,
				Base:       []*unstructured.Unstructured{parse(t, tc.doc), parse(t, other)},
				Rendered:   []*unstructured.Unstructured{parse(t, tc.doc), parse(t, strings.Replace(other, "app", "app:2", 1))},
				BaseSource: tc.baseSource, HeadSource: tc.headSource})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(p.Existing) - 1; got != tc.want {
				t.Errorf("previewed %v, want hello %d times", kindNames(p.Existing), tc.want)
			}
		})
	}
}

func TestPlanPreviewCopy(t *testing.T) {
	p, err := planPreview(t, []string{configV1}, []string{configV2}, true)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Copies[0]
	if _, found, _ := unstructured.NestedFieldNoCopy(c.Object, "immutable"); found {
		t.Error("the copy is immutable: the next head could not update it")
	}
	if got, _, _ := unstructured.NestedString(c.Object, "data", "greeting"); got != "hello" {
		t.Errorf("copy data greeting = %q, want the head's", got)
	}
	if c.GetLabels()["team"] != "web" || c.GetAnnotations()[CommitAnnotation] != sha2 {
		t.Errorf("copy metadata = %v %v", c.GetLabels(), c.GetAnnotations())
	}
}

func TestPlanPreviewService(t *testing.T) {
	p, err := planPreview(t, nil, []string{strings.Replace(readsConfigYAML, "%s", "api", 1)}, true)
	if err != nil {
		t.Fatal(err)
	}
	svc := serviceOfT(t, p.Services[0])
	if svc.Spec.Traffic != nil {
		t.Errorf("traffic %v, want all to the latest Revision", svc.Spec.Traffic)
	}
	tmpl := svc.Spec.Template
	if tmpl.Name != "api-pr-3-"+sha2[:7] {
		t.Errorf("template name %q, want one of the preview's own", tmpl.Name)
	}
	if _, ok := tmpl.Labels[PullRequestLabel]; ok || tmpl.Labels[RepositoryLabel] != "hello" {
		t.Errorf("template labels %v: the Revisions are the Configuration's, not preview Revisions", tmpl.Labels)
	}
	if tmpl.Annotations[CommitAnnotation] != sha2 || tmpl.Annotations[MessageAnnotation] != "Try" {
		t.Errorf("template annotations %v", tmpl.Annotations)
	}
}

func TestPlanPreviewRefuses(t *testing.T) {
	other := strings.Replace(configV2, "name: hello-config", "name: hello-config\n  namespace: prod", 1)
	taken := strings.Replace(configV1, "name: hello-config", "name: hello-config-pr-3", 1)
	for _, tc := range []struct {
		name  string
		kinds Kinds
		head  string
		want  string
	}{
		{"a name the base branch deploys", Kinds{}, configV2, "ConfigMap hello-config-pr-3: the preview would take the name"},
		{"a kind the repository may not deploy", Kinds{Allowed: []string{"Service.serving.knative.dev"}}, configV2, "ConfigMap hello-config: kind ConfigMap is not allowed"},
		{"another namespace", Kinds{}, other, `ConfigMap hello-config: namespace "prod"`},
		{"a Service that is not one", Kinds{}, "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: api}\nspec: {template: 3}\n", "Service api:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var head []*unstructured.Unstructured
			head = append(head, parse(t, tc.head))
			_, err := PlanPreview(PreviewInput{Head: previewHead(), Number: 3, BaseBranch: "main", BaseMain: true, Rendered: head, Kinds: tc.kinds,
				Base: []*unstructured.Unstructured{parse(t, configV1), parse(t, taken)}})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalid naming %q", err, tc.want)
			}
		})
	}
}

func TestRewriteConfigMapRefs(t *testing.T) {
	renames := map[string]string{"a": "a-pr-1", "b": "b-pr-1"}
	cmRef := func(n string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: n} }
	spec := servingv1.PodSpec{
		Volumes: []corev1.Volume{
			{Name: "v1", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: cmRef("a")}}},
			{Name: "v2", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef("b")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: cmRef("a")}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: cmRef("c")}},
			}}}},
			{Name: "v3", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "a"}}},
		},
		InitContainers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: cmRef("a")}}}}},
		Containers: []corev1.Container{{
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: cmRef("a")}}},
			Env: []corev1.EnvVar{
				{Name: "X", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: cmRef("b"), Key: "k"}}},
				{Name: "Y", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: cmRef("b"), Key: "k"}}},
				{Name: "Z", Value: "a"},
			},
		}},
	}
	got := RewriteConfigMapRefs(&spec, renames)
	if d := cmp.Diff([]string{"a", "b"}, got); d != "" {
		t.Errorf("rewritten (-want +got):\n%s", d)
	}
	for what, pair := range map[string][2]string{
		"configMap volume":           {spec.Volumes[0].ConfigMap.Name, "a-pr-1"},
		"projected configMap":        {spec.Volumes[1].Projected.Sources[0].ConfigMap.Name, "b-pr-1"},
		"projected secret":           {spec.Volumes[1].Projected.Sources[1].Secret.Name, "a"},
		"projected unchanged config": {spec.Volumes[1].Projected.Sources[2].ConfigMap.Name, "c"},
		"secret volume":              {spec.Volumes[2].Secret.SecretName, "a"},
		"init envFrom":               {spec.InitContainers[0].EnvFrom[0].ConfigMapRef.Name, "a-pr-1"},
		"envFrom secret":             {spec.Containers[0].EnvFrom[0].SecretRef.Name, "a"},
		"configMapKeyRef":            {spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name, "b-pr-1"},
		"secretKeyRef":               {spec.Containers[0].Env[1].ValueFrom.SecretKeyRef.Name, "b"},
		"plain value":                {spec.Containers[0].Env[2].Value, "a"},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s = %q, want %q", what, pair[0], pair[1])
		}
	}
	if got := RewriteConfigMapRefs(&servingv1.PodSpec{}, renames); len(got) != 0 {
		t.Errorf("empty spec rewrote %v", got)
	}
}

// FuzzPlanPreview plans a preview from any base and head a commit may
// hold. It never panics; what it plans is labelled as the pull
// request's, in the repository's namespace, under names of at most 63
// characters, and no reference is left to a ConfigMap it copied.
func FuzzPlanPreview(f *testing.F) {
	f.Add(configV1, strings.Replace(readsConfigYAML, "%s", "hello", 1), configV2, strings.Replace(readsConfigYAML, "%s", "api", 1))
	f.Add(configV1, "", configV1, "")
	f.Add(strings.Replace(sinkYAML, "%s", "a", 1), "kind: Service\napiVersion: serving.knative.dev/v1\nmetadata: {name: x}\nspec: {template: {spec: {volumes: [{name: v, configMap: {}}]}}}\n",
		strings.Replace(sinkYAML, "%s", "b", 1), "kind: ConfigMap\napiVersion: v1\nmetadata: {name: \"\"}\ndata: {a: b}\n")
	f.Fuzz(func(t *testing.T, base1, base2, head1, head2 string) {
		var base, head []*unstructured.Unstructured
		for _, in := range []struct {
			doc  string
			into *[]*unstructured.Unstructured
		}{{base1, &base}, {base2, &base}, {head1, &head}, {head2, &head}} {
			u := &unstructured.Unstructured{}
			if yaml.Unmarshal([]byte(in.doc), &u.Object) != nil || u.Object == nil {
				continue
			}
			if len(validation.IsDNS1123Subdomain(u.GetName())) > 0 {
				continue // the render refuses nameless or ill-named objects first
			}
			*in.into = append(*in.into, u)
		}
		p, err := PlanPreview(PreviewInput{Head: previewHead(), Number: 3, BaseBranch: "main", BaseMain: true, Base: base, Rendered: head})
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error not ErrInvalid: %v", err)
			}
			return
		}
		copied := map[string]bool{}
		for _, c := range p.Copies {
			if c.GetKind() == "ConfigMap" {
				copied[strings.TrimSuffix(c.GetName(), "-pr-3")] = true
			}
		}
		for _, o := range append(p.Copies, p.Services...) {
			if o.GetLabels()[PullRequestLabel] != "3" || o.GetNamespace() != "default" || len(o.GetName()) > 63 {
				t.Fatalf("%s %q: labels %v namespace %q", o.GetKind(), o.GetName(), o.GetLabels(), o.GetNamespace())
			}
		}
		for _, o := range append(p.Existing, p.Services...) {
			spec := serviceOfT(t, o).Spec.Template.Spec
			for _, v := range spec.Volumes {
				if v.ConfigMap != nil && copied[v.ConfigMap.Name] {
					t.Fatalf("Service %s still mounts ConfigMap %s", o.GetName(), v.ConfigMap.Name)
				}
			}
		}
	})
}

func serviceOfT(t *testing.T, u *unstructured.Unstructured) *servingv1.Service {
	t.Helper()
	svc, err := serviceOf(u)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
