package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// generate writes the kustomization kustomize is given for a directory
// that has none: one listing the directory's YAML files that hold
// Kubernetes objects, as Flux generates one.
func (w *walker) generate(dir string) (string, error) {
	entries, err := w.repo.entries(dir)
	if err != nil {
		return "", err
	}
	var files []string
	for _, e := range entries {
		ext := path.Ext(e.Name)
		if strings.HasPrefix(e.Name, ".") || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		p := path.Join(dir, e.Name)
		n, err := w.repo.stat(p)
		if errors.Is(err, errNotFound) { // listed, so a symlink to nothing
			return "", invalid(p, fmt.Errorf("symlink to a file the commit does not hold: %w", err))
		}
		if err != nil {
			return "", err
		}
		if n.dir {
			continue
		}
		data, err := w.repo.read(p)
		if err != nil {
			return "", err
		}
		ok, err := holdsObjects(p, data)
		if err != nil {
			return "", err
		}
		if ok {
			files = append(files, e.Name)
		}
	}
	if len(files) == 0 {
		return "", invalid(dirName(dir), errors.New("no kustomization file and no *.yaml or *.yml file with Kubernetes objects"))
	}
	k := types.Kustomization{
		TypeMeta:  types.TypeMeta{APIVersion: types.KustomizationVersion, Kind: types.KustomizationKind},
		Resources: files,
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return "", fmt.Errorf("generate kustomization: %w", err)
	}
	kf := path.Join(dir, konfig.DefaultKustomizationFileName())
	w.repo.add(kf, data)
	return kf, nil
}

// holdsObjects reports whether any document of a YAML file has both
// apiVersion and kind; it fails, naming the file and line, on bad YAML.
func holdsObjects(file string, data []byte) (bool, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	found := false
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return false, invalid(file, err)
		}
		var obj struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		if n.Decode(&obj) == nil && obj.APIVersion != "" && obj.Kind != "" {
			found = true
		}
	}
}

func dirName(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}
