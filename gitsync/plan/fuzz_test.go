package plan

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// FuzzNames: whatever a branch is called (git allows almost anything)
// and however long a Service's name, the names knit derives for it — the
// branch's Service, its Revisions and its pull requests' previews — are
// DNS-1035 labels of at most 63 characters, the rule Kubernetes holds
// them to.
func FuzzNames(f *testing.F) {
	f.Add("hello", "feature/Login_2", sha1, int64(1))
	f.Add(strings.Repeat("a", 63), strings.Repeat("b-", 40), sha2, int64(9223372036854775807))
	f.Add("a", "---", "0000000", int64(0))
	f.Add("x-y", "ÄÖÜ/日本", "zz", int64(-5))
	f.Add("app", "release/1.0--rc", "abc", int64(42))
	f.Fuzz(func(t *testing.T, name, branch, sha string, number int64) {
		if len(validation.IsDNS1035Label(name)) > 0 || !isHex(sha) || number < 0 {
			return // admission refuses such a Service name; SHAs are hex; numbers positive
		}
		svc := ServiceName(name, branch, false)
		for what, got := range map[string]string{
			"service": svc, "revision": RevisionName(svc, sha), "preview": PullRequestRevisionName(svc, number, sha),
			"main revision": RevisionName(name, sha),
		} {
			if errs := validation.IsDNS1035Label(got); len(errs) > 0 {
				t.Fatalf("%s name %q (from %q, branch %q): %v", what, got, name, branch, errs)
			}
		}
	})
}

// isHex reports whether s could be a commit SHA: hex, at least as long
// as the short form names carry.
func isHex(s string) bool {
	return len(s) >= shortSHA && strings.Trim(s, "0123456789abcdef") == ""
}

// FuzzWithCanaries splits any traffic Git declares — percents a commit
// may write, right or wrong — with pull requests' canaries asking for any
// share. It never panics; when Git's traffic is valid (percents from 0
// to 100 adding up to 100) the split adds up to 100 again with no target
// below 0, and each canary gets at most what it asked for.
func FuzzWithCanaries(f *testing.F) {
	f.Add(int64(100), int64(0), int64(0), int64(20), int64(0))
	f.Add(int64(50), int64(50), int64(0), int64(60), int64(60))
	f.Add(int64(33), int64(33), int64(34), int64(1), int64(99))
	f.Add(int64(-1), int64(2), int64(99), int64(10), int64(10))
	f.Add(int64(9223372036854775807), int64(1), int64(0), int64(-3), int64(500))
	f.Add(int64(-9223372036854775808), int64(9223372036854775807), int64(2), int64(50), int64(0))
	f.Fuzz(func(t *testing.T, p1, p2, p3, c1, c2 int64) {
		traffic := []servingv1.TrafficTarget{
			{LatestRevision: ptr.To(true), Percent: ptr.To(p1)},
			{RevisionName: "hello-a", Percent: ptr.To(p2)},
			{RevisionName: "hello-b", Tag: "old", Percent: ptr.To(p3)},
		}
		canaries := []Canary{{Tag: "pr-1", RevisionName: "hello-pr1", Percent: c1}, {Tag: "pr-2", RevisionName: "hello-pr2", Percent: c2}}
		got := WithCanaries(traffic, canaries)
		valid := p1+p2+p3 == 100
		for _, p := range []int64{p1, p2, p3} {
			valid = valid && p >= 0 && p <= 100
		}
		if !valid {
			return
		}
		var sum int64
		for _, tt := range got {
			p := ptr.Deref(tt.Percent, 0)
			if p < 0 || p > 100 {
				t.Fatalf("target %+v: percent %d", tt, p)
			}
			sum += p
		}
		if sum != 100 || len(got) != len(traffic)+len(canaries) {
			t.Fatalf("split %v adds up to %d over %d targets", got, sum, len(got))
		}
		for i, c := range canaries {
			if p := *got[len(traffic)+i].Percent; p > max(c.Percent, 0) {
				t.Fatalf("canary %s asked %d, got %d", c.Tag, c.Percent, p)
			}
		}
	})
}

// FuzzObjects plans any rendered document (a Service with any traffic,
// template and names, or any other object) for any branch and commit: it
// is refused with ErrInvalid or planned into the GitRepository's
// namespace, labelled with where it came from, a Service's Revision named
// within Kubernetes' limits. It never panics.
func FuzzObjects(f *testing.F) {
	f.Add(helloYAML, "main", "Say hello", true)
	f.Add(helloYAML, "feature/x", "", false)
	f.Add("apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: s}\nspec:\n  traffic:\n  - {latestRevision: true, percent: 9223372036854775807}\n  - {revisionName: s-old, percent: -9223372036854775808}\n", "main", "m", true)
	f.Add("apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: s, namespace: other}\n", "main", "m", true)
	f.Add("apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\n", "main", "m", true)
	f.Add("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, labels: {knit.dev/branch: forged}}\ndata: {a: b}\n", "b", "m", false)
	f.Add("apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: s}\nspec: {template: {metadata: {name: 5}}}\n", "main", "m", true)
	f.Fuzz(func(t *testing.T, doc, branch, message string, main bool) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.Object == nil {
			return
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return // render refuses those
		}
		if len(validation.IsDNS1035Label(u.GetName())) > 0 {
			return // admission refuses such names
		}
		c := Commit{Repository: "hello", Namespace: "default", Branch: branch, Main: main, SHA: sha1, Author: "Ada <ada@example.com>", Message: message}
		objs, err := Objects(Input{
			Commit: c, Rendered: []*unstructured.Unstructured{u}, Namespaced: namespacedAll,
			Live:     func(string) *servingv1.Service { return nil },
			Canaries: map[string][]Canary{u.GetName(): {{Tag: Tag(1), RevisionName: PullRequestRevisionName(u.GetName(), 1, sha2), Percent: 20}}},
		})
		if err != nil {
			if !strings.Contains(err.Error(), ErrInvalid.Error()) {
				t.Fatalf("Objects: %v: a commit's error must match ErrInvalid", err)
			}
			return
		}
		for _, o := range objs {
			if o.GetNamespace() != "default" || o.GetLabels()[RepositoryLabel] != "hello" || o.GetLabels()[BranchLabel] != branch {
				t.Fatalf("planned %s %s in %q labelled %v", o.GetKind(), o.GetName(), o.GetNamespace(), o.GetLabels())
			}
			if o.GroupVersionKind() != serviceGVK {
				continue
			}
			svc := toService(t, o)
			if errs := validation.IsDNS1035Label(svc.Name); len(errs) > 0 {
				t.Fatalf("Service name %q: %v", svc.Name, errs)
			}
			if n := svc.Spec.Template.Name; n != "" && len(n) > 63 {
				t.Fatalf("Revision name %q is longer than 63", n)
			}
		}
	})
}
