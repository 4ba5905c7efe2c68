package render

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// DefaultMaxBytes is the default of Options.MaxBytes.
const DefaultMaxBytes = 32 << 20

// Options tune Render. The zero value is ready to use.
type Options struct {
	// MaxBytes bounds the total size of the files read from the commit:
	// kustomization files and the files they name. A commit that needs
	// more is refused (ErrInvalid). Default DefaultMaxBytes.
	MaxBytes int64
	// MaxAliasNodes bounds the nodes that expanding the YAML aliases and
	// << merges of the files read costs kustomize, counted over the whole
	// render (see aliasBudget). A commit that needs more is refused
	// (ErrInvalid). Default DefaultMaxAliasNodes.
	MaxAliasNodes int64
	// Decrypter decrypts the commit's SOPS-encrypted files in memory, as
	// they are read; the objects they hold carry
	// DecryptedFromAnnotation. Nil refuses an encrypted file (ErrInvalid)
	// rather than deploying its ciphertext.
	Decrypter Decrypter
}

// Defaults fills what was left empty.
func (o *Options) Defaults() {
	if o.MaxBytes == 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxAliasNodes == 0 {
		o.MaxAliasNodes = DefaultMaxAliasNodes
	}
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if o.MaxBytes < 0 {
		return fmt.Errorf("render: MaxBytes %d is negative", o.MaxBytes)
	}
	if o.MaxAliasNodes < 0 {
		return fmt.Errorf("render: MaxAliasNodes %d is negative", o.MaxAliasNodes)
	}
	return nil
}

// Render renders the kustomization in directory dir of a commit's tree
// ("" or "." for the repository root) with the default Options. See
// Options.Render.
func Render(tree *object.Tree, dir string) ([]*unstructured.Unstructured, error) {
	return Options{}.Render(tree, dir)
}

// Render renders the kustomization in directory dir of a commit's tree
// ("" or "." for the repository root), or the plain YAML files of dir when
// it has no kustomization file, and returns the objects in a
// deterministic order (see the package doc). Errors caused by the commit
// match ErrInvalid. The tree is read, never written; like any go-git
// object it must not be used by another goroutine meanwhile.
func (o Options) Render(tree *object.Tree, dir string) ([]*unstructured.Unstructured, error) {
	o.Defaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if tree == nil {
		return nil, errors.New("render: nil tree")
	}
	dir, err := join("", strings.TrimPrefix(dir, "./"))
	if err != nil {
		return nil, invalid(dir, err)
	}
	w := &walker{repo: newRepo(tree, o.MaxBytes), aliases: newAliasBudget(o.MaxAliasNodes), visited: map[string]*walked{}}
	w.repo.decrypter = o.Decrypter
	n, err := w.repo.stat(dir)
	if errors.Is(err, errNotFound) {
		return nil, invalid(dirName(dir), errors.New("no such directory in the commit"))
	}
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, invalid(dir, errors.New("not a directory"))
	}
	kf, err := w.kustomizationFile(dir)
	if err != nil {
		return nil, err
	}
	if kf == "" {
		if _, err := w.generate(dir); err != nil {
			return nil, err
		}
	}
	if err := w.kustomization(dir, false, 0); err != nil {
		return nil, err
	}
	objs, err := build(w.repo.files, dir)
	if err != nil {
		return nil, err
	}
	if err := settle(objs, w.repo.nonce); err != nil {
		return nil, err
	}
	return objs, nil
}

// build runs kustomize over the files the walk read.
func build(files map[string][]byte, dir string) ([]*unstructured.Unstructured, error) {
	fs := filesys.MakeFsInMemory()
	for p, data := range files {
		if err := fs.WriteFile("/"+p, data); err != nil {
			// kustomize's in-memory filesystem takes names of letters,
			// digits, '-', '_', '.' and ':' only, where git takes any.
			return nil, invalid(p, fmt.Errorf("kustomize cannot read this file's name (%w): rename it with letters, digits, '-', '_', '.' and ':' only", err))
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.AddManagedbyLabel = false
	rm, err := krusty.MakeKustomizer(opts).Run(fs, path.Join("/", dir))
	if err != nil {
		return nil, invalid("", fmt.Errorf("kustomize build %s: %w", dirName(dir), err))
	}
	objs := make([]*unstructured.Unstructured, 0, rm.Size())
	for _, r := range rm.Resources() {
		data, err := r.MarshalJSON()
		if err != nil { // YAML JSON cannot say, such as a map with number keys
			return nil, invalid("", fmt.Errorf("object %s is not JSON: %w", r.CurId(), err))
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, invalid("", fmt.Errorf("object %s: %w", r.CurId(), err))
		}
		// kustomize builds an object without apiVersion; no API server
		// would take it, so it is the commit's error, said here.
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return nil, invalid("", fmt.Errorf("object %s has no apiVersion or no kind", r.CurId()))
		}
		objs = append(objs, u)
	}
	slices.SortStableFunc(objs, compareObjects)
	return objs, nil
}

// compareObjects orders Namespaces first and CustomResourceDefinitions
// next, so that applying in order never meets a missing namespace or kind,
// then everything by group, version, kind, namespace and name.
func compareObjects(a, b *unstructured.Unstructured) int {
	ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
	return cmp.Or(
		cmp.Compare(kindRank(ga.Kind), kindRank(gb.Kind)),
		cmp.Compare(ga.Group, gb.Group),
		cmp.Compare(ga.Kind, gb.Kind),
		cmp.Compare(ga.Version, gb.Version),
		cmp.Compare(a.GetNamespace(), b.GetNamespace()),
		cmp.Compare(a.GetName(), b.GetName()),
	)
}

func kindRank(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	default:
		return 2
	}
}
