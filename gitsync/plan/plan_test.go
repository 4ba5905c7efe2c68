package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

const sha1 = "0123456789abcdef0123456789abcdef01234567"
const sha2 = "fedcba9876543210fedcba9876543210fedcba98"

func parse(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const helloYAML = `
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
spec:
  template:
    spec:
      containers:
        - image: ko://./cmd/hello
          env: [{name: TARGET, value: World}]
`

func namespacedAll(schema.GroupVersionKind) (bool, error) { return true, nil }

func commit(sha string) Commit {
	return Commit{Repository: "hello", Namespace: "default", Branch: "main", Main: true, SHA: sha, Author: "Ada <ada@example.com>", Message: "Say hello\n\nlong body"}
}

func toService(t *testing.T, u *unstructured.Unstructured) *servingv1.Service {
	t.Helper()
	svc := &servingv1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, svc); err != nil {
		t.Fatal(err)
	}
	return svc
}

func planOne(t *testing.T, doc string, c Commit, live *servingv1.Service, canaries map[string][]Canary) *servingv1.Service {
	t.Helper()
	objs, err := Objects(Input{Commit: c, Rendered: []*unstructured.Unstructured{parse(t, doc)}, Namespaced: namespacedAll, Canaries: canaries,
		Live: func(string) *servingv1.Service { return live }})
	if err != nil {
		t.Fatal(err)
	}
	return toService(t, objs[0])
}

func TestServiceStampsRevisionPerCommit(t *testing.T) {
	first := planOne(t, helloYAML, commit(sha1), nil, nil)
	if first.Namespace != "default" || first.Name != "hello" {
		t.Errorf("service = %s/%s, want default/hello", first.Namespace, first.Name)
	}
	if got := first.Spec.Template.Name; got != "hello-0123456" {
		t.Errorf("revision name = %s, want hello-<sha7>", got)
	}
	wantAnn := map[string]string{CommitAnnotation: sha1, AuthorAnnotation: "Ada <ada@example.com>", MessageAnnotation: "Say hello"}
	if diff := cmp.Diff(wantAnn, first.Spec.Template.Annotations); diff != "" {
		t.Errorf("template annotations (-want +got):\n%s", diff)
	}
	if first.Labels[RepositoryLabel] != "hello" || first.Spec.Template.Labels[BranchLabel] != "main" || first.Annotations[CommitAnnotation] != sha1 {
		t.Errorf("labels/annotations = %v %v", first.Labels, first.Annotations)
	}

	t.Run("a commit that leaves the template alone keeps the revision", func(t *testing.T) {
		second := planOne(t, helloYAML, commit(sha2), first, nil)
		if second.Spec.Template.Name != "hello-0123456" || second.Spec.Template.Annotations[CommitAnnotation] != sha1 {
			t.Errorf("template = %s %v, want the first commit's revision kept", second.Spec.Template.Name, second.Spec.Template.Annotations)
		}
		if second.Annotations[CommitAnnotation] != sha2 {
			t.Errorf("service commit = %s, want the new commit recorded on the Service", second.Annotations[CommitAnnotation])
		}
	})
	t.Run("a commit that changes the template stamps a new revision", func(t *testing.T) {
		changed := strings.Replace(helloYAML, "World", "knit", 1)
		second := planOne(t, changed, commit(sha2), first, nil)
		if second.Spec.Template.Name != "hello-fedcba9" || second.Spec.Template.Annotations[CommitAnnotation] != sha2 {
			t.Errorf("template = %s %v, want hello-fedcba9 from the second commit", second.Spec.Template.Name, second.Spec.Template.Annotations)
		}
	})
	t.Run("a name written in Git wins", func(t *testing.T) {
		named := strings.Replace(helloYAML, "  template:\n", "  template:\n    metadata:\n      name: hello-v1\n", 1)
		svc := planOne(t, named, commit(sha2), first, nil)
		if svc.Spec.Template.Name != "hello-v1" {
			t.Errorf("template name = %s, want hello-v1", svc.Spec.Template.Name)
		}
	})
	t.Run("another tracked branch gets its own service", func(t *testing.T) {
		c := commit(sha2)
		c.Branch, c.Main = "staging/EU", false
		svc := planOne(t, helloYAML, c, nil, nil)
		if svc.Name != "hello-staging-eu" || svc.Spec.Template.Name != "hello-staging-eu-fedcba9" {
			t.Errorf("names = %s, %s", svc.Name, svc.Spec.Template.Name)
		}
	})
	t.Run("pull requests add tagged canaries", func(t *testing.T) {
		svc := planOne(t, helloYAML, commit(sha1), nil, map[string][]Canary{"hello": {{Tag: "pr-3", RevisionName: "hello-pr3-fedcba9", Percent: 20}}})
		want := []servingv1.TrafficTarget{
			{LatestRevision: ptr.To(true), Percent: ptr.To[int64](80)},
			{Tag: "pr-3", RevisionName: "hello-pr3-fedcba9", LatestRevision: ptr.To(false), Percent: ptr.To[int64](20)},
		}
		if diff := cmp.Diff(want, svc.Spec.Traffic); diff != "" {
			t.Errorf("traffic (-want +got):\n%s", diff)
		}
	})
}

func TestObjectsRefuses(t *testing.T) {
	tests := []struct {
		name, doc, want string
		namespaced      bool
	}{
		{"another namespace", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: prod}\n", `namespace "prod" is not the GitRepository's "default"`, true},
		{"cluster-scoped", "apiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n", "cluster-scoped objects are not deployed from Git", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Objects(Input{Commit: commit(sha1), Rendered: []*unstructured.Unstructured{parse(t, tt.doc)},
				Namespaced: func(schema.GroupVersionKind) (bool, error) { return tt.namespaced, nil }})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid saying %q", err, tt.want)
			}
		})
	}
}

func TestOtherObjectsAreStamped(t *testing.T) {
	objs, err := Objects(Input{Commit: commit(sha1), Namespaced: namespacedAll,
		Rendered: []*unstructured.Unstructured{parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	cm := objs[0]
	if cm.GetNamespace() != "default" || cm.GetLabels()[RepositoryLabel] != "hello" || cm.GetAnnotations()[CommitAnnotation] != sha1 {
		t.Errorf("configmap = %v", cm.Object)
	}
}

func TestPullRequestRevision(t *testing.T) {
	head := commit(sha2)
	head.Branch, head.Main = "feature", false
	rev, err := PullRequestRevision(head, parse(t, helloYAML), "hello", 3)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Name != "hello-pr3-fedcba9" || rev.Namespace != "default" {
		t.Errorf("revision = %s/%s", rev.Namespace, rev.Name)
	}
	for k, want := range map[string]string{servingv1.ServiceLabelKey: "hello", PullRequestLabel: "3", BranchLabel: "feature", RepositoryLabel: "hello"} {
		if rev.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, rev.Labels[k], want)
		}
	}
	if rev.Annotations[CommitAnnotation] != sha2 || rev.Spec.Containers[0].Image != "ko://./cmd/hello" {
		t.Errorf("revision = %+v", rev)
	}
}

// A Service built from the repository (ko://./…, dockerfile://…) gets a
// new Revision when its sources change, even if its YAML did not; one
// built from elsewhere does not care.
func TestSourceChangesStampBuiltServices(t *testing.T) {
	in := func(doc, source, sha string, live *servingv1.Service) *servingv1.Service {
		objs, err := Objects(Input{Commit: commit(sha), Rendered: []*unstructured.Unstructured{parse(t, doc)}, Namespaced: namespacedAll,
			Source: source, Live: func(string) *servingv1.Service { return live }})
		if err != nil {
			t.Fatal(err)
		}
		return toService(t, objs[0])
	}
	first := in(helloYAML, "src-1", sha1, nil)
	if got := in(helloYAML, "src-2", sha2, first).Spec.Template.Name; got != "hello-fedcba9" {
		t.Errorf("code change: revision %s, want a new one", got)
	}
	if got := in(helloYAML, "src-1", sha2, first).Spec.Template.Name; got != "hello-0123456" {
		t.Errorf("no code change: revision %s, want the first kept", got)
	}
	// A Dockerfile service's code (app.py, say) is in the same fingerprint.
	docker := strings.Replace(helloYAML, "ko://./cmd/hello", "dockerfile://./web", 1)
	firstDocker := in(docker, "src-1", sha1, nil)
	if got := in(docker, "src-2", sha2, firstDocker).Spec.Template.Name; got != "hello-fedcba9" {
		t.Errorf("dockerfile:// service, code change: revision %s, want a new one", got)
	}
	remote := strings.Replace(helloYAML, "ko://./cmd/hello", "ko://example.com/hello", 1)
	firstRemote := in(remote, "src-1", sha1, nil)
	if got := in(remote, "src-2", sha2, firstRemote).Spec.Template.Name; got != "hello-0123456" {
		t.Errorf("remote image, repo sources changed: revision %s, want the first kept", got)
	}
}

func TestSourceFingerprint(t *testing.T) {
	fp := func(files ...string) string {
		return SourceFingerprint(func(yield func(name, blob string) bool) {
			for i := 0; i < len(files); i += 2 {
				if !yield(files[i], files[i+1]) {
					return
				}
			}
		})
	}
	base := fp("cmd/hello/main.go", "a", "go.mod", "b", "README.md", "c", "service.yaml", "d")
	if fp("cmd/hello/main.go", "a", "go.mod", "b", "README.md", "CHANGED", "service.yaml", "CHANGED", ".gitignore", "x") != base {
		t.Error("docs, manifests and dotfiles changed the fingerprint")
	}
	if fp("cmd/hello/main.go", "CHANGED", "go.mod", "b", "README.md", "c", "service.yaml", "d") == base {
		t.Error("a code change left the fingerprint alone")
	}
}

// A traffic percent no admission takes is refused before the canaries are
// added: apportioning it overflowed, and the reconciler panicked (found by
// FuzzObjects).
func TestTrafficPercentOutOfRangeRefused(t *testing.T) {
	for _, percent := range []string{"120000000000000000", "-1", "101"} {
		doc := helloYAML + "  traffic:\n    - {latestRevision: true, percent: " + percent + "}\n"
		_, err := Objects(Input{Commit: commit(sha1), Rendered: []*unstructured.Unstructured{parse(t, doc)}, Namespaced: namespacedAll,
			Live:     func(string) *servingv1.Service { return nil },
			Canaries: map[string][]Canary{"hello": {{Tag: "pr-1", RevisionName: "hello-pr1-abc", Percent: 20}}}})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "traffic percent "+percent+" is not between 0 and 100") {
			t.Errorf("percent %s: Objects = %v, want ErrInvalid naming the percent", percent, err)
		}
	}
}
