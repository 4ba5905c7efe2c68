package gitrepository

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing/transport"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	"github.com/knitops/knit/gitsync/egress"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// Reasons of the Fetched condition when the reconciler refuses to fetch
// because of what it would have to send.
const (
	// ReasonCredentialsInURL: spec.url carries a user name or password,
	// which would show wherever the URL does (status, Events, logs, build
	// Jobs); nothing is fetched until they move to spec.secretRef.
	ReasonCredentialsInURL = "CredentialsInURL"
	// ReasonSecretNotForGit: spec.secretRef names a Secret not labelled
	// gitsource.CredentialsLabel; none of its keys is sent anywhere.
	ReasonSecretNotForGit = "SecretNotForGit"
	// ReasonSSHKeyRequired: spec.url is an SSH URL and spec.secretRef
	// does not give a usable deploy key and known_hosts.
	ReasonSSHKeyRequired = "SSHKeyRequired"
	// ReasonGitHubAppToken: spec.secretRef holds GitHub App credentials
	// that could not be exchanged for an installation token.
	ReasonGitHubAppToken = "GitHubAppTokenFailed"
	// ReasonNotRepositoryOwner: spec.url is a repository of knit's Git
	// server that belongs to another namespace (gitserver.Owners); the
	// server's token is not presented for it.
	ReasonNotRepositoryOwner = "NotRepositoryOwner"
)

// accessError is a refusal to fetch with a reason of its own; its message
// never carries a credential.
type accessError struct {
	reason string
	msg    string
}

func (e *accessError) Error() string { return e.msg }

// authFailedReason is the Fetched condition's reason for an error of auth.
func authFailedReason(err error) string {
	if ae := (*accessError)(nil); errors.As(err, &ae) {
		return ae.reason
	}
	return knitv1alpha1.ReasonCredentialsNotFound
}

// auth is what a fetch of repo presents: the keys of its credentials
// Secret, if it names one, else knit's Git server's token when the
// repository is the server's and belongs to repo's namespace
// (GitServer.auth), else nothing. A URL carrying credentials and a Secret
// not meant for Git are refused before anything is read or sent.
func (r *Reconciler) auth(ctx context.Context, repo *knitv1alpha1.GitRepository) (transport.AuthMethod, error) {
	if gitsource.CarriesCredentials(repo.Spec.URL) {
		return nil, &accessError{reason: ReasonCredentialsInURL, msg: fmt.Sprintf(
			"spec.url %s carries credentials (user@ or user:password@): knit does not fetch it, since a URL shows in status, Events and logs; "+
				"remove them and name a Secret labelled %s=true in spec.secretRef",
			gitsource.RedactURL(repo.Spec.URL), gitsource.CredentialsLabel)}
	}
	ssh := gitsource.IsSSH(repo.Spec.URL)
	if ssh && repo.Spec.SecretRef == nil {
		return nil, &accessError{reason: ReasonSSHKeyRequired, msg: fmt.Sprintf(
			"spec.url %s is fetched over SSH: name a Secret labelled %s=true in spec.secretRef holding %s (a deploy key) and %s (the server's host keys)",
			gitsource.RedactURL(repo.Spec.URL), gitsource.CredentialsLabel, gitsource.SecretIdentity, gitsource.SecretKnownHosts)}
	}
	if repo.Spec.SecretRef != nil {
		secret := &corev1.Secret{}
		key := types.NamespacedName{Namespace: repo.Namespace, Name: repo.Spec.SecretRef.Name}
		if err := r.reader.Get(ctx, key, secret); err != nil {
			return nil, fmt.Errorf("credentials Secret %s: %w", key, err)
		}
		if err := gitsource.CheckCredentialsSecret(secret); err != nil {
			return nil, &accessError{reason: ReasonSecretNotForGit, msg: "spec.secretRef: " + err.Error()}
		}
		if ssh {
			auth, err := gitsource.SSHAuthFromSecret(repo.Spec.URL, secret.Data, r.egressPolicy())
			if err != nil {
				return nil, &accessError{reason: ReasonSSHKeyRequired, msg: "spec.secretRef: " + err.Error()}
			}
			return auth, nil
		}
		data, err := r.githubApps.Resolve(ctx, secret.Data)
		if err != nil {
			return nil, &accessError{reason: ReasonGitHubAppToken, msg: "spec.secretRef: " + err.Error()}
		}
		if auth := gitsource.AuthFromSecret(data); auth != nil {
			return auth, nil
		}
	}
	return r.gitServer.auth(ctx, repo)
}

// egressPolicy is the policy fetches obey, as the Cache asks it.
func (r *Reconciler) egressPolicy() *egress.Policy {
	if r.cache == nil || r.cache.Egress == nil {
		return &egress.Policy{}
	}
	return r.cache.Egress()
}
