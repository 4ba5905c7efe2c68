package render

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// parseDocs parses every document of data with one decoder, as checkYAML
// does; ok is false when data is not YAML.
func parseDocs(data string) (docs []*yaml.Node, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader([]byte(data)))
	for {
		n := &yaml.Node{}
		err := dec.Decode(n)
		if errors.Is(err, io.EOF) {
			return docs, true
		}
		if err != nil {
			return nil, false
		}
		docs = append(docs, n)
	}
}

func TestExpansionCountsWhatKyamlCopies(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		copied     int64
		loop       bool
	}{
		{name: "no aliases", yaml: "a: [x, y]\nb: {c: d}\n"},
		{name: "a scalar alias", yaml: "a: &a x\nb: *a\n", copied: 1},
		{name: "a list used twice", yaml: "a: &a [x, y]\nb: *a\nc: *a\n", copied: 6},
		{name: "aliases of aliases", yaml: "a: &a x\nb: &b [*a, *a]\nc: [*b, *b]\n", copied: 2 + 2*3},
		{name: "a merge copies the mapping and what it names", yaml: "m: &m {x: 1}\nn: {<<: *m, y: 2}\n", copied: 3 + 7},
		{name: "an alias into an earlier document", yaml: "a: &a [x]\n---\nb: *a\n", copied: 2},
		{name: "an alias inside its own anchor", yaml: "a: &a [*a]\n", loop: true},
		{name: "an alias deep inside its own anchor", yaml: "a: &a {b: {c: [x, *a]}}\n", loop: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, ok := parseDocs(tc.yaml)
			if !ok {
				t.Fatalf("not YAML: %q", tc.yaml)
			}
			e := expansion{size: map[*yaml.Node]int64{}, open: map[*yaml.Node]bool{}, limit: 1 << 40}
			var err error
			for _, d := range docs {
				if _, err = e.count(d); err != nil {
					break
				}
			}
			if tc.loop {
				if !errors.Is(err, errAliasLoop) {
					t.Fatalf("err = %v, want an alias loop", err)
				}
				return
			}
			if err != nil || e.copied != tc.copied {
				t.Errorf("copied %d (%v), want %d", e.copied, err, tc.copied)
			}
		})
	}
}

// The bound is for the whole render: files that are each under it but
// together over it are refused at the file that runs it out, so a commit
// cannot spread an alias bomb over many files.
func TestAliasBudgetSpansTheRender(t *testing.T) {
	obj := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\ndata:\n  a: &a x\n  b: *a\n  c: *a\n"
	files := map[string]string{
		"kustomization.yaml": "resources: [a.yaml, b.yaml]\n",
		"a.yaml":             strings.Replace(obj, "NAME", "a", 1),
		"b.yaml":             strings.Replace(obj, "NAME", "b", 1),
	}
	tree := memTree(t, files, nil)
	if _, err := (Options{MaxAliasNodes: 4}).Render(tree, ""); err != nil {
		t.Fatalf("four copies under a limit of four: %v", err)
	}
	_, err := Options{MaxAliasNodes: 3}.Render(tree, "")
	var inv *InvalidError
	if !errors.As(err, &inv) || inv.File != "b.yaml" || !strings.Contains(err.Error(), "YAML aliases expand to more than 3 nodes") {
		t.Errorf("err = %v, want b.yaml refused for expanding to more than 3 nodes", err)
	}
}

// kyaml copies a mapping to merge into it before it expands what the
// mapping holds, so merges nested in merges cost the square of the
// nesting: 300 levels, 4 KiB, would copy about 200,000 nodes.
func TestNestedMergesAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: example.com/v1\nkind: Merges\nmetadata:\n  name: nested\nm: &m {x: 1}\nspec: ")
	b.WriteString(strings.Repeat("{<<: *m, a: ", 300) + "1" + strings.Repeat("}", 300) + "\n")
	tree := memTree(t, map[string]string{"kustomization.yaml": "resources: [merges.yaml]\n", "merges.yaml": b.String()}, nil)
	_, err := Render(tree, "")
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "merges.yaml: YAML aliases expand to more than") {
		t.Errorf("err = %v, want merges.yaml refused", err)
	}
}

// FuzzAliasExpansion checks the count against kyaml itself: whenever the
// budget lets a file through, expanding it as kustomize does (DeAnchor)
// gives no more nodes than the file holds plus what was charged, so
// kustomize never does more work than the budget allows; and counting
// never fails on YAML kyaml expands without error, but for loops.
func FuzzAliasExpansion(f *testing.F) {
	for _, s := range []string{
		"a: &a x\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"m: &m {x: 1}\nn: {<<: *m, y: 2}\no: {<<: [*m, {z: 3}], <<: *m}\n",
		"a: &a [x]\n---\nb: *a\n---\n*a\n",
		"a: &a {b: &b [*b]}\n",
		"l0: &l0 [x,x,x]\nl1: &l1 [*l0,*l0,*l0]\nl2: &l2 [*l1,*l1,*l1]\nl3: [*l2,*l2,*l2]\n",
		"- &a {<<: {k: v}}\n- {<<: *a, <<: *a}\n- !!merge <<: *a\n",
		"&x {a: *x}\n",
	} {
		f.Add(s)
	}
	const limit = 20_000
	f.Fuzz(func(t *testing.T, data string) {
		docs, ok := parseDocs(data)
		if !ok {
			return
		}
		b := newAliasBudget(limit)
		if err := b.charge("f.yaml", docs); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("charge: %v does not match ErrInvalid", err)
			}
			return
		}
		copied := limit - b.left
		literal := int64(0)
		for _, d := range docs {
			literal += nodes(d, false)
		}
		expanded := int64(0)
		for _, d := range docs {
			rn := yaml.NewRNode(d)
			if err := rn.DeAnchor(); err != nil {
				return // kyaml refuses it; kustomize reports the file
			}
			expanded += nodes(rn.YNode(), true)
		}
		if expanded > literal+copied {
			t.Fatalf("kyaml expanded %d nodes, more than the %d the file holds plus the %d charged", expanded, literal, copied)
		}
	})
}

// nodes counts the nodes of a tree; followAliases counts an alias as what
// it points at, which DeAnchor leaves no more of.
func nodes(n *yaml.Node, followAliases bool) int64 {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.AliasNode {
		if followAliases {
			return nodes(n.Alias, true)
		}
		return 1
	}
	c := int64(1)
	for _, k := range n.Content {
		c += nodes(k, followAliases)
	}
	return c
}
