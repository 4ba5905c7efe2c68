package runtime

import (
	"fmt"
	"strconv"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"github.com/moby/sys/user"
	corev1 "k8s.io/api/core/v1"
)

// ociUser is who a container of an image runs as: the securityContext's
// runAsUser and runAsGroup (container over pod) when set, else the
// image's USER, looked up in the image's own /etc/passwd and /etc/group
// as containerd looks it up; the pod's supplementalGroups and fsGroup
// are added to the groups the image gives the user.
type ociUser struct {
	UID, GID uint32
	Groups   []uint32
	Home     string
}

// resolveOCIUser finds the user in the container's root filesystem
// rootfs. The image's files are the image author's: they are read
// through securejoin, so a /etc/passwd that is a link out of the image
// reads nothing of this machine's.
func resolveOCIUser(rootfs, imageUser string, spec *corev1.PodSpec, c *corev1.Container, pod podIdentity) (ociUser, *failure) {
	want := effectiveRunAs(spec, c)
	userSpec := imageUser
	switch {
	case want.uid != nil && want.gid != nil:
		userSpec = fmt.Sprintf("%d:%d", *want.uid, *want.gid)
	case want.uid != nil:
		userSpec = strconv.FormatInt(*want.uid, 10)
	case want.gid != nil:
		name, _, _ := strings.Cut(imageUser, ":")
		userSpec = fmt.Sprintf("%s:%d", name, *want.gid)
	}
	podRef := fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	if want.nonRoot && want.uid == nil {
		name, _, _ := strings.Cut(imageUser, ":")
		if _, err := strconv.Atoi(name); name != "" && err != nil {
			return ociUser{}, &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(
				"container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", name, podRef, c.Name)}
		}
	}
	passwd, err := securejoin.SecureJoin(rootfs, "/etc/passwd")
	if err != nil {
		return ociUser{}, configError(c, err)
	}
	group, err := securejoin.SecureJoin(rootfs, "/etc/group")
	if err != nil {
		return ociUser{}, configError(c, err)
	}
	eu, err := user.GetExecUserPath(userSpec, &user.ExecUser{Home: "/"}, passwd, group)
	if err != nil {
		return ociUser{}, &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(
			"container %s: user %q of image: %v", c.Name, userSpec, err)}
	}
	if want.nonRoot && eu.Uid == 0 {
		return ociUser{}, &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf(
			"container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podRef, c.Name)}
	}
	u := ociUser{UID: uint32(eu.Uid), GID: uint32(eu.Gid), Home: eu.Home}
	for _, g := range eu.Sgids {
		u.Groups = appendGroup(u.Groups, uint32(g))
	}
	for _, g := range want.groups {
		u.Groups = appendGroup(u.Groups, g)
	}
	return u, nil
}

func configError(c *corev1.Container, err error) *failure {
	return &failure{Reason: ReasonCreateContainerConfigError, Message: fmt.Sprintf("container %s: %v", c.Name, err)}
}
