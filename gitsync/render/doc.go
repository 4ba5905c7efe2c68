// Package render turns one commit of an app repository into the Kubernetes
// objects it declares, the way `kustomize build` would, without touching
// the disk or the network.
//
// knit's GitOps path renders every commit it syncs: a branch is a
// Configuration, a commit is a Revision, so the same commit must always
// give the same objects, and a bad commit must be reported to its author
// instead of retried. Render therefore works from the go-git tree of the
// commit alone:
//
//   - It walks the kustomization graph first (the kustomization file of the
//     directory asked for, then every base, component and plugin directory it
//     names) and checks each reference before kustomize runs. Remote bases and
//     resources (URLs, github.com/… git references, user@host:… SCP style) are
//     refused, so kustomize never clones or downloads anything; so are
//     absolute paths, paths that climb out of the repository, symlinks that
//     point out of it, helmCharts (they exec helm) and generators,
//     transformers or validators that are not kustomize built-ins (exec, Go
//     and KRM function plugins).
//   - Only the files that walk reaches are read from the commit, bounded by
//     Options.MaxBytes, into kustomize's in-memory filesystem (symlinks that
//     stay inside the repository are followed). An app repository that keeps
//     its source next to its manifests costs no more than its manifests.
//     kustomize builds a directory again for every kustomization that
//     refers to it, so a directory met again is charged again what its
//     first walk cost: bases shared through chains of overlays cannot make
//     kustomize build exponentially more than the budget.
//   - Every YAML file the walk reads for kustomize, and the YAML written
//     inline in a kustomization (patches, plugin configs), is parsed first
//     and what its aliases expand to is counted on the parsed tree, where
//     an alias is still one node. kyaml replaces every alias by a copy of
//     its anchor, so anchors of aliases of a few hundred bytes would be a
//     billion nodes, and an alias inside its own anchor recurses until the
//     Go stack overflows, killing the process. The copies (and those <<
//     merges make) are bounded for the whole render by
//     Options.MaxAliasNodes; an alias inside its own anchor is refused.
//   - kustomize (krusty) then builds it with built-in plugins only and
//     load restrictions root-only, as `kustomize build` does by default.
//   - The objects come back in a deterministic order: Namespaces, then
//     CustomResourceDefinitions, then everything else by API group, kind,
//     namespace and name.
//
// A directory without a kustomization file is rendered the way Flux does
// it: a kustomization listing the directory's *.yaml and *.yml files is
// generated. Only the directory itself is scanned, not its subdirectories,
// and files without any document that has both apiVersion and kind (CI
// configuration, app settings) are left out, because app repositories keep
// their source, and its YAML, next to their manifests. Hidden files are
// skipped.
//
// # Errors
//
// Every error caused by the content of the commit (YAML syntax, a refused
// reference, a failing kustomize build, too many bytes, aliases that expand
// too far) matches ErrInvalid
// with errors.Is and is an *InvalidError naming the file at fault, so a
// caller can show it on a condition and not retry: rendering the same
// commit again gives the same error. Any other error (reading the object
// store) is internal and may be retried.
package render
