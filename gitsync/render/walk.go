package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// maxDepth bounds how deep kustomizations nest; symlinked directories can
// otherwise make an endless chain of logical paths.
const maxDepth = 64

// functionAnnotations mark a KRM function plugin config (exec, container or
// starlark), as kustomize's fnplugin reads them.
var functionAnnotations = []string{"config.kubernetes.io/function", "config.k8s.io/function"}

// builtinPlugins are the kinds a generators/transformers/validators entry
// may use: kustomize's statically linked plugins, less the Helm inflator
// (it runs helm and downloads charts).
var builtinPlugins = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range krusty.GetBuiltinPluginNames() {
		m[n] = true
	}
	delete(m, "HelmChartInflationGenerator")
	return m
}()

// walker visits the kustomization graph of a commit, checks every
// reference before kustomize sees it, and reads the files kustomize will
// need into its repo.
type walker struct {
	repo    *repo
	aliases *aliasBudget
	visited map[string]*walked
}

// kustomizationFile returns the logical path of dir's kustomization file,
// or "" when dir has none.
func (w *walker) kustomizationFile(dir string) (string, error) {
	var found []string
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := path.Join(dir, name)
		n, err := w.repo.stat(p)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		if !n.dir {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	default:
		return "", invalid(dir, fmt.Errorf("more than one kustomization file: %s", strings.Join(found, ", ")))
	}
}

// walk checks the kustomization in dir and everything it refers to, the
// first time kustomization meets dir.
func (w *walker) walk(dir string, plugins bool, depth int) error {
	if depth > maxDepth {
		return invalid(dir, fmt.Errorf("kustomizations nest more than %d deep", maxDepth))
	}
	kf, err := w.kustomizationFile(dir)
	if err != nil {
		return err
	}
	if kf == "" {
		return invalid(dir, fmt.Errorf("directory has no kustomization file (one of %s)", strings.Join(konfig.RecognizedKustomizationFileNames(), ", ")))
	}
	data, err := w.repo.read(kf)
	if err != nil {
		return err
	}
	if err := w.checkYAML(kf, data); err != nil {
		return err
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return invalid(kf, err)
	}
	k.FixKustomization() // bases join resources, env joins envs, helmChartInflationGenerator joins helmCharts
	if len(k.HelmCharts) > 0 || k.HelmGlobals != nil {
		return invalid(kf, errors.New("helmCharts are not supported: they run helm and download charts; commit the rendered manifests instead"))
	}

	c := check{w: w, dir: dir, kf: kf, depth: depth}
	for _, r := range k.Resources {
		c.resource("resource", r, plugins)
	}
	for _, r := range k.Components {
		c.resource("component", r, plugins)
	}
	for _, f := range k.Crds {
		c.yamlFile("crds", f)
	}
	for _, f := range k.Configurations {
		c.yamlFile("configurations", f)
	}
	if f, ok := k.OpenAPI["path"]; ok {
		c.yamlFile("openapi", f)
	}
	c.patches(&k)
	for _, r := range k.Replacements {
		if r.Path != "" {
			c.yamlFile("replacements", r.Path)
		}
	}
	kvs := make([]types.KvPairSources, 0, len(k.ConfigMapGenerator)+len(k.SecretGenerator))
	for _, g := range k.ConfigMapGenerator {
		kvs = append(kvs, g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kvs = append(kvs, g.KvPairSources)
	}
	for _, s := range kvs {
		for _, f := range s.FileSources {
			// [key=]path, as kustomize's generators.ParseFileSource reads it.
			if _, p, ok := strings.Cut(f, "="); ok {
				f = p
			}
			c.file("files", f)
		}
		for _, f := range s.EnvSources {
			c.file("envs", f)
		}
	}
	for _, f := range []struct {
		name    string
		entries []string
	}{{"generators", k.Generators}, {"transformers", k.Transformers}, {"validators", k.Validators}} {
		for _, e := range f.entries {
			if isInline(e) {
				c.inline(e)
				if c.err == nil {
					c.err = checkPlugins(kf, []byte(e))
				}
				continue
			}
			c.resource(f.name, e, true)
		}
	}
	return c.err
}

// check collects the first error met while checking one kustomization's
// references.
type check struct {
	w     *walker
	dir   string
	kf    string
	depth int
	err   error
}

// ref checks a reference and returns its logical path and what it is.
func (c *check) ref(field, ref string) (string, node, bool) {
	if c.err != nil {
		return "", node{}, false
	}
	if isRemote(ref) {
		c.err = invalid(c.kf, fmt.Errorf("%s %q is remote; knit renders only what the commit holds, so vendor it into the repository", field, ref))
		return "", node{}, false
	}
	p, err := join(c.dir, ref)
	if err != nil {
		c.err = invalid(c.kf, fmt.Errorf("%s %q: %w", field, ref, err))
		return "", node{}, false
	}
	n, err := c.w.repo.stat(p)
	if errors.Is(err, errNotFound) {
		hint := ""
		if looksLikeHost(ref) {
			hint = " (remote references are not allowed)"
		}
		c.err = invalid(c.kf, fmt.Errorf("%s %q: %w%s", field, ref, errNotFound, hint))
		return "", node{}, false
	}
	if err != nil {
		c.err = err
		return "", node{}, false
	}
	return p, n, true
}

// resource checks an entry that is a file of objects or a directory
// holding a kustomization; plugins says the objects are plugin configs.
func (c *check) resource(field, ref string, plugins bool) {
	p, n, ok := c.ref(field, ref)
	if !ok {
		return
	}
	if n.dir {
		c.err = c.w.kustomization(p, plugins, c.depth+1)
		return
	}
	data, err := c.w.repo.read(p)
	if err == nil {
		err = c.w.checkYAML(p, data)
	}
	if err == nil && plugins {
		err = checkPlugins(p, data)
	}
	c.err = err
}

// yamlFile checks an entry that names a YAML file.
func (c *check) yamlFile(field, ref string) {
	p, _, ok := c.ref(field, ref)
	if !ok {
		return
	}
	data, err := c.w.repo.read(p)
	if err == nil {
		err = c.w.checkYAML(p, data)
	}
	c.err = err
}

// patches checks the patch entries: the files they name, and the YAML
// written inline, which kustomize parses (and expands) as it does files.
func (c *check) patches(k *types.Kustomization) {
	for _, p := range k.Patches {
		if p.Path != "" {
			c.yamlFile("patch", p.Path)
		} else {
			c.inline(p.Patch)
		}
	}
	for _, p := range k.PatchesJson6902 {
		if p.Path != "" {
			c.yamlFile("patchesJson6902", p.Path)
		} else {
			c.inline(p.Patch)
		}
	}
	for _, p := range k.PatchesStrategicMerge {
		if isInline(string(p)) {
			c.inline(string(p))
		} else {
			c.yamlFile("patchesStrategicMerge", string(p))
		}
	}
}

// inline checks YAML written inside the kustomization file, as one of
// its files.
func (c *check) inline(content string) {
	if c.err == nil {
		c.err = c.w.checkYAML(c.kf, []byte(content))
	}
}

// file checks an entry that names a file of any kind.
func (c *check) file(field, ref string) {
	p, _, ok := c.ref(field, ref)
	if !ok {
		return
	}
	_, c.err = c.w.repo.read(p)
}

// isInline reports whether a patchesStrategicMerge, generators,
// transformers or validators entry is YAML content rather than a path, by
// kustomize's own rule: it is content when it parses as an object.
func isInline(s string) bool {
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return false
	}
	_, ok := v.(map[string]any)
	return ok
}

var scpUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether kustomize would fetch ref over the network: a
// URL (it downloads http(s) files and clones git URLs), SCP-style
// user@host:path, or github.com/… (cloned even when a local directory of
// that name exists). The optional git:: prefix is ignored as kustomize
// ignores it.
func isRemote(ref string) bool {
	s := strings.TrimSpace(ref)
	if len(s) >= 5 && strings.EqualFold(s[:5], "git::") {
		s = s[5:]
	}
	l := strings.ToLower(s)
	return strings.Contains(s, "://") || scpUser.MatchString(s) ||
		strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:")
}

// looksLikeHost reports whether a reference that is not in the commit was
// probably meant as a remote one (gitlab.com/org/repo, …?ref=v1).
func looksLikeHost(ref string) bool {
	first, _, found := strings.Cut(ref, "/")
	return strings.Contains(ref, "?ref=") || strings.Contains(ref, "//") ||
		(found && strings.Contains(first, ".") && first != "." && first != "..")
}

// checkYAML parses every document of a YAML file so that a syntax error
// names the file and the line, and charges what its aliases expand to.
func (w *walker) checkYAML(file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		n := &yaml.Node{}
		err := dec.Decode(n)
		if errors.Is(err, io.EOF) {
			return w.aliases.charge(file, docs)
		}
		if err != nil {
			return invalid(file, err)
		}
		docs = append(docs, n)
	}
}

// checkPlugins refuses plugin configs that are not kustomize built-ins.
func checkPlugins(file string, data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var obj struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name        string            `yaml:"name"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
		}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return invalid(file, err)
		}
		if obj.Kind == "" && obj.APIVersion == "" {
			continue // an empty document
		}
		for _, a := range functionAnnotations {
			if _, ok := obj.Metadata.Annotations[a]; ok {
				return invalid(file, fmt.Errorf("plugin %s %q is a KRM function (%s); only kustomize's built-in generators and transformers are allowed", obj.Kind, obj.Metadata.Name, a))
			}
		}
		if obj.APIVersion != konfig.BuiltinPluginApiVersion || !builtinPlugins[obj.Kind] {
			return invalid(file, fmt.Errorf("plugin %s/%s %q is not one of kustomize's built-in generators and transformers; exec, Go and function plugins are not allowed", obj.APIVersion, obj.Kind, obj.Metadata.Name))
		}
	}
}
