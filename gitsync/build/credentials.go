package build

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/gitsync/gitserver"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// credential is a key of a repository's Secret a build's fetch step
// reads, and the environment variable knit-builder reads it from.
type credential struct{ key, env string }

var (
	httpCredentials = []credential{{"username", "GIT_USERNAME"}, {"password", "GIT_PASSWORD"}, {"bearerToken", "GIT_BEARERTOKEN"}}
	sshCredentials  = []credential{{gitsource.SecretIdentity, "GIT_SSH_IDENTITY"}, {gitsource.SecretKnownHosts, "GIT_SSH_KNOWN_HOSTS"},
		{gitsource.SecretPassword, "GIT_SSH_PASSWORD"}}
)

// credentialsFor are the credentials a fetch of url reads.
func credentialsFor(url string) []credential {
	if gitsource.IsSSH(url) {
		return sshCredentials
	}
	return httpCredentials
}

// gitCredentials is the fetch step's environment for the repository: its
// own credentials (copied beside the Job) when it has some, else knit's
// Git server's token, and that only for a repository on that server. An
// SSH repository's deploy key and known_hosts go to knit-builder, which
// is git's SSH client there.
func gitCredentials(c Config, r Request) []corev1.EnvVar {
	var env []corev1.EnvVar
	if r.Credentials != "" {
		for _, cr := range credentialsFor(r.URL) {
			env = append(env, corev1.EnvVar{Name: cr.env, ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Credentials}, Key: cr.key, Optional: ptr.To(true)},
			}})
		}
	} else if c.GitServerSecret != "" && gitserver.OnServer(c.GitServerURL, r.URL) {
		env = append(env, corev1.EnvVar{Name: "GIT_USERNAME", Value: "knit"}, corev1.EnvVar{Name: "GIT_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: c.GitServerSecret}, Key: gitserver.TokenKey},
		}})
	}
	return env
}
