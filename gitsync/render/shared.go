package render

import "fmt"

// walked is what walking a kustomization directory cost the budgets, the
// directories it refers to included.
type walked struct{ bytes, aliasNodes int64 }

// kustomization checks the kustomization in dir and everything it refers
// to. plugins says that the resources of dir are plugin configs (dir was
// named by a generators, transformers or validators entry).
//
// A directory is walked once, but kustomize builds it again for every
// kustomization that refers to it, bases of bases included: overlays that
// each refer twice to the one below make it build the bottom one 2^n
// times from a few hundred bytes. So meeting a directory again charges
// the budgets what its first walk cost, and shared bases cost what
// kustomize does with them.
func (w *walker) kustomization(dir string, plugins bool, depth int) error {
	key := fmt.Sprintf("%s\x00%t", dir, plugins)
	if c, ok := w.visited[key]; ok {
		return w.again(dir, c)
	}
	c := &walked{} // nothing while the walk is under way: a loop, which kustomize refuses
	w.visited[key] = c
	bytes, nodes := w.repo.budget, w.aliases.left
	err := w.walk(dir, plugins, depth)
	*c = walked{bytes: bytes - w.repo.budget, aliasNodes: nodes - w.aliases.left}
	return err
}

// again charges the budgets for a directory kustomize builds once more.
func (w *walker) again(dir string, c *walked) error {
	if c.bytes > w.repo.budget {
		return invalid(dirName(dir), fmt.Errorf("kustomize builds this directory again for every kustomization that refers to it, and the builds read more than %d bytes in all; refer to it from fewer places", w.repo.limit))
	}
	if c.aliasNodes > w.aliases.left {
		return invalid(dirName(dir), fmt.Errorf("kustomize builds this directory again for every kustomization that refers to it, and the builds' YAML aliases expand to more than %d nodes in all; refer to it from fewer places", w.aliases.limit))
	}
	w.repo.budget -= c.bytes
	w.aliases.left -= c.aliasNodes
	return nil
}
