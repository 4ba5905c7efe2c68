package dev

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// fieldOwner is the server-side apply manager name of everything knit dev
// installs, so `kubectl get -o yaml --show-managed-fields` says who set what.
const fieldOwner = "knit-dev"

// installCRDs applies every CRD manifest in fsys and waits until the API
// serves them, so the manager's caches and the user's first kubectl call
// never race the CRD registration.
func installCRDs(ctx context.Context, c client.Client, fsys fs.FS) ([]string, error) {
	files, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list CRDs: %w", err)
	}
	names := make([]string, 0, len(files))
	for _, f := range files {
		name, err := applyCRD(ctx, c, fsys, f)
		if err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	for _, name := range names {
		if err := waitEstablished(ctx, c, name); err != nil {
			return nil, err
		}
	}
	return names, nil
}

func applyCRD(ctx context.Context, c client.Client, fsys fs.FS, file string) (string, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return "", fmt.Errorf("read CRD %s: %w", file, err)
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &u.Object); err != nil {
		return "", fmt.Errorf("decode CRD %s: %w", file, err)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return "", fmt.Errorf("apply CRD %s: %w", u.GetName(), err)
	}
	return u.GetName(), nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, nil
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s not established: %w", name, err)
	}
	return nil
}
