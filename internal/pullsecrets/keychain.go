// Package pullsecrets finds the registry credentials a kubelet would use
// for a pod: the Secrets its imagePullSecrets name, then its
// ServiceAccount's, then the Docker config of the user the program runs
// as. knit dev's runtime pulls with them, and the Revision controller
// resolves tags to digests with them, in both modes.
package pullsecrets

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	k8schain "github.com/google/go-containerregistry/pkg/authn/kubernetes"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keychain is the credentials for a pod in namespace that runs as
// serviceAccount ("" is default) and names pullSecrets. A Secret or
// ServiceAccount that does not exist is skipped, as the kubelet skips it;
// any other error reading one is returned, naming it, and never its
// content.
func Keychain(ctx context.Context, reader client.Reader, namespace, serviceAccount string, pullSecrets []corev1.LocalObjectReference) (authn.Keychain, error) {
	names := make([]string, 0, len(pullSecrets))
	for _, s := range pullSecrets {
		names = append(names, s.Name)
	}
	saName := serviceAccount
	if saName == "" {
		saName = "default"
	}
	var sa corev1.ServiceAccount
	err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: saName}, &sa)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("service account %s/%s: %w", namespace, saName, err)
	}
	for _, s := range sa.ImagePullSecrets {
		names = append(names, s.Name)
	}
	var secrets []corev1.Secret
	for _, n := range names {
		var s corev1.Secret
		err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: n}, &s)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("image pull secret %s/%s: %w", namespace, n, err)
		}
		secrets = append(secrets, s)
	}
	fromSecrets, err := k8schain.NewFromPullSecrets(ctx, secrets)
	if err != nil {
		return nil, fmt.Errorf("image pull secrets of namespace %s: %w", namespace, err)
	}
	return authn.NewMultiKeychain(fromSecrets, authn.DefaultKeychain), nil
}
