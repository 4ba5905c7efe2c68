package build

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/gitsync/gitserver"
)

// gitCredentials is the fetch step's environment for the repository: its
// own credentials (copied beside the Job) when it has some, else knit's
// Git server's token, and that only for a repository on that server.
func gitCredentials(c Config, r Request) []corev1.EnvVar {
	var env []corev1.EnvVar
	if r.Credentials != "" {
		for _, k := range []string{"username", "password", "bearerToken"} {
			env = append(env, corev1.EnvVar{Name: "GIT_" + strings.ToUpper(k), ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: r.Credentials}, Key: k, Optional: ptr.To(true)},
			}})
		}
	} else if c.GitServerSecret != "" && gitserver.OnServer(c.GitServerURL, r.URL) {
		env = append(env, corev1.EnvVar{Name: "GIT_USERNAME", Value: "knit"}, corev1.EnvVar{Name: "GIT_PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: c.GitServerSecret}, Key: gitserver.TokenKey},
		}})
	}
	return env
}
