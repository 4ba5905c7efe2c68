package revision

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// digestRef is what a Revision's status.containerStatuses[].imageDigest
// holds: <repository>@sha256:<64 hex>, the form Knative records and its
// conformance suite parses (name.NewDigest) and compares with the image.
var digestRef = regexp.MustCompile(`^[^@\s]+@sha256:[0-9a-f]{64}$`)

// imageDigest normalises a kubelet's status.containerStatuses[].imageID
// to a digest reference: container runtimes report the image the
// container runs as repo@sha256:…, the dockershim with a
// docker-pullable:// prefix. An ID that names no repository (sha256:…, an
// image built on the node or imported by its ID) is not one: "".
func imageDigest(imageID string) string {
	id := strings.TrimPrefix(imageID, "docker-pullable://")
	if !digestRef.MatchString(id) {
		return ""
	}
	return id
}

// ContainerStatuses are the digests the Revision's containers run, in
// the order of its spec, read from its pods' status: a container's digest
// from any pod that reports one. The Revision's own digests come from the
// registry before it is deployed (package resolve); these say what ran
// where nothing was resolved (a registry that skips resolving). Unless
// every container has one it is nil: a ko:// image run by knit dev has no
// digest, and a partial list would pair images with the wrong digests in
// Knative's check, which goes by index.
func ContainerStatuses(rev *servingv1.Revision, pods []corev1.Pod) []servingv1.ContainerStatus {
	return statusesOf(rev.Spec.Containers, pods, func(p corev1.Pod) []corev1.ContainerStatus { return p.Status.ContainerStatuses })
}

// InitContainerStatuses is ContainerStatuses for the init containers.
func InitContainerStatuses(rev *servingv1.Revision, pods []corev1.Pod) []servingv1.ContainerStatus {
	return statusesOf(rev.Spec.InitContainers, pods, func(p corev1.Pod) []corev1.ContainerStatus { return p.Status.InitContainerStatuses })
}

func statusesOf(cs []corev1.Container, pods []corev1.Pod, reported func(corev1.Pod) []corev1.ContainerStatus) []servingv1.ContainerStatus {
	digests := map[string]string{}
	for _, p := range pods {
		for _, st := range reported(p) {
			if d := imageDigest(st.ImageID); d != "" && digests[st.Name] == "" {
				digests[st.Name] = d
			}
		}
	}
	out := make([]servingv1.ContainerStatus, 0, len(cs))
	for _, c := range cs {
		d := digests[c.Name]
		if d == "" {
			return nil
		}
		out = append(out, servingv1.ContainerStatus{Name: c.Name, ImageDigest: d})
	}
	return out
}

// digestsKnown says whether status already names a digest for every
// container and init container: the digests are set once, as Knative
// sets them, and pods are no longer read for the Revision.
func digestsKnown(rev *servingv1.Revision) bool {
	return len(rev.Status.ContainerStatuses) == len(rev.Spec.Containers) && len(rev.Spec.Containers) > 0 &&
		len(rev.Status.InitContainerStatuses) == len(rev.Spec.InitContainers)
}
