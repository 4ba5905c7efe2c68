package build

import (
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/knitops/knit/gitsync/build/dockerfile"
)

// dockerfileStep builds a dockerfile:// image with BuildKit, in the
// compile step's place: the only step that runs what the user wrote (the
// Dockerfile's RUN steps), holding no credential.
const dockerfileStep = "dockerfile"

// dockerfilePodSpec is a dockerfile:// build's pod: the cache and fetch
// steps as for ko://, then BuildKit without root building the context
// into an OCI layout in the workspace, then the push of that layout.
func dockerfilePodSpec(c Config, r Request, ref dockerfile.Ref, key string) corev1.PodSpec {
	spec := podSpec(c, r, key)
	// The fetch drops .git (the context is the tree alone) and the push
	// sends the layout rather than packing a binary.
	fetch, push := fetchContainer(c, r), pushContainer(c, r, key)
	fetch.Args = append(fetch.Args, "--context="+ref.Dir)
	push.Args = append(push.Args, "--context="+ref.Dir)
	spec.InitContainers = []corev1.Container{fetch, buildkitContainer(c, r, ref)}
	if c.CacheClaim != "" {
		spec.InitContainers = append([]corev1.Container{cacheContainer(c, r)}, spec.InitContainers...)
	}
	spec.Containers = []corev1.Container{push}
	spec.Volumes = slices.DeleteFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "tmp-"+compileStep })
	spec.Volumes = append(spec.Volumes, emptyDir("tmp-"+dockerfileStep))
	return spec
}

// buildkitContainer runs rootless BuildKit (knit-builder's dockerfile
// step in the BuildKit image) over the workspace's checkout, with the
// namespace's directory of the cache claim as BuildKit's state, so its
// layer cache outlives the build and no namespace reads another's.
//
// Its security context is what rootless BuildKit needs and no more:
// nonroot still, but allowed to gain privileges through the image's
// newuidmap/newgidmap (file capabilities CAP_SETUID and CAP_SETGID, the
// only ones the container's bounding set keeps), which
// map nonroot's subordinate ids into the user namespace buildkitd runs
// in; seccomp and AppArmor unconfined, since the runtime's default
// profiles refuse the unshare(2) and mount(2) calls that namespace needs.
// Inside it, buildkitd runs the RUN steps with runc, each in a network
// namespace holding only loopback, or, with allowed hosts, in
// buildkitd's own, where loopback leads to the allow-list proxy alone.
func buildkitContainer(c Config, r Request, ref dockerfile.Ref) corev1.Container {
	args := []string{"--step=" + dockerfileStep, "--workspace=" + workspaceDir, "--cache-dir=" + cacheDir,
		"--context=" + ref.Dir, "--dockerfile=" + ref.File, "--platform=" + c.Platform,
		"--insecure=" + strconv.FormatBool(c.Insecure)}
	if ref.Target != "" {
		args = append(args, "--target="+ref.Target)
	}
	for _, k := range slices.Sorted(maps.Keys(ref.Args)) {
		args = append(args, "--build-arg="+k+"="+ref.Args[k])
	}
	for _, m := range c.Mirrors {
		args = append(args, "--mirror="+m)
	}
	for _, h := range c.AllowHosts {
		args = append(args, "--allow-host="+h)
	}
	ct := step(c, dockerfileStep, args)
	ct.Image = c.BuildKitImage
	cache := corev1.VolumeMount{Name: "cache", MountPath: cacheDir}
	if c.CacheClaim != "" {
		cache.SubPath = cacheSubPath(r)
	}
	ct.VolumeMounts = append(ct.VolumeMounts, corev1.VolumeMount{Name: "workspace", MountPath: workspaceDir}, cache)
	ct.Resources = resources(c)
	ct.SecurityContext = &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](nonRootUID), RunAsGroup: ptr.To[int64](nonRootUID),
		AllowPrivilegeEscalation: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities:    &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"SETUID", "SETGID"}},
		SeccompProfile:  &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined},
		AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
	}
	return ct
}
