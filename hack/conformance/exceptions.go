package main

// exceptions are the tests a mode fails by design, each with the reason
// docs/conformance.md gives. knit dev runs replicas as processes on this
// machine, not in containers: what the runtime contract says of a
// container's image config has no process equivalent there (its users,
// cgroups, /dev, volumes and probes do, and pass). Cluster mode has none:
// there every test must pass.
var exceptions = map[string]map[string]string{
	"dev": {
		"TestShouldRunAsUserContainerDefault": "knit dev builds a ko:// image into a binary, not an image: there is no image config to declare a default user (ko's base image declares 65532), so the process runs as the user running knit dev unless securityContext.runAsUser says otherwise (TestMustRunAsUser, which sets it, passes). On a cluster the kubelet runs the image's user.",
	},
	"cluster": {},
}
