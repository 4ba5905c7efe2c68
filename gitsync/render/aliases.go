package render

import (
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// DefaultMaxAliasNodes is the default of Options.MaxAliasNodes. Expanded,
// that many nodes are about 1.5 MiB of YAML written out: far under
// DefaultMaxBytes, so aliases never let a commit cost kustomize more than
// a commit within the byte limit that writes every object out.
const DefaultMaxAliasNodes = 100_000

// aliasBudget bounds the nodes kustomize copies to expand the YAML
// aliases of one render. kyaml replaces every alias by a deep copy of its
// anchor (DeAnchor, for every object it reads), so aliases of aliases grow
// exponentially: ten anchors of ten aliases each, under 600 bytes, would
// be a billion nodes, and an alias inside its own anchor recurses until
// the Go stack overflows, which no recover catches. The budget is counted
// from the parsed tree, where an alias is still one node pointing at its
// anchor, before kustomize sees the file.
type aliasBudget struct {
	left, limit int64
}

func newAliasBudget(limit int64) *aliasBudget { return &aliasBudget{left: limit, limit: limit} }

// errAliasLoop is the cause when an alias lies inside its own anchor.
var errAliasLoop = errors.New("alias inside its own anchor would expand forever")

// charge takes from the budget the nodes kustomize will copy to expand the
// aliases of the documents of one file (parsed by the same decoder, as
// anchors outlive their document) and fails, naming the file, when the
// budget runs out or an alias lies inside its own anchor.
func (b *aliasBudget) charge(file string, docs []*yaml.Node) error {
	e := expansion{size: map[*yaml.Node]int64{}, open: map[*yaml.Node]bool{}, limit: b.left + 1}
	for _, d := range docs {
		if _, err := e.count(d); err != nil {
			return invalid(file, err)
		}
	}
	if e.copied > b.left {
		return invalid(file, fmt.Errorf("YAML aliases expand to more than %d nodes, the limit for one render (kustomize copies every alias and every << merge); write the repeated parts out or share them with a kustomize base or component", b.limit))
	}
	b.left -= e.copied
	return nil
}

// expansion counts, in one walk of the parsed tree, how many nodes
// kyaml's DeAnchor will copy: for each alias, the expanded size of its
// anchor; for each mapping with a << key, the expanded size of the
// mapping (kyaml copies it to merge into). Sizes are remembered for
// anchored nodes, so the walk costs what the file holds, not what it
// expands to. Every count stops growing past limit.
type expansion struct {
	size   map[*yaml.Node]int64 // expanded size of anchored nodes already counted
	open   map[*yaml.Node]bool  // anchored nodes being counted: the path from the root
	copied int64
	limit  int64
}

// count returns the expanded size of n, at most e.limit.
func (e *expansion) count(n *yaml.Node) (int64, error) {
	if n == nil {
		return 0, nil
	}
	if n.Kind == yaml.AliasNode {
		return e.alias(n)
	}
	if s, ok := e.size[n]; ok {
		return s, nil
	}
	if n.Anchor != "" {
		e.open[n] = true
		defer delete(e.open, n)
	}
	size, merges := int64(1), false
	for i, c := range n.Content {
		s, err := e.count(c)
		if err != nil {
			return 0, err
		}
		size = e.add(size, s)
		merges = merges || n.Kind == yaml.MappingNode && i%2 == 0 && isMergeKey(c)
	}
	if merges {
		e.copied = e.add(e.copied, size)
	}
	if n.Anchor != "" {
		e.size[n] = size
	}
	return size, nil
}

// alias counts an alias: a copy of its anchor.
func (e *expansion) alias(n *yaml.Node) (int64, error) {
	if n.Alias == nil {
		return 1, nil
	}
	if e.open[n.Alias] {
		return 0, fmt.Errorf("yaml: line %d: *%s: %w", n.Line, n.Value, errAliasLoop)
	}
	s, err := e.count(n.Alias)
	if err != nil {
		return 0, err
	}
	e.copied = e.add(e.copied, s)
	return s, nil
}

// add adds without passing limit.
func (e *expansion) add(a, b int64) int64 {
	return min(a+b, e.limit)
}

// isMergeKey reports whether a mapping key is a YAML 1.1 merge key, as
// kyaml finds them (a plain << resolves to the !!merge tag), or looks like
// one: counting a quoted "<<" too only overestimates.
func isMergeKey(k *yaml.Node) bool {
	return k.Tag == yaml.MergeTag || k.Value == "<<"
}
