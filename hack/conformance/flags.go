package main

// flagsSection is what docs/conformance.md says of each config-features
// flag of the release: what turning it on does in knit, in each mode. It
// is written by hand, not measured, and kept here so the report carries
// it; knit's config package holds the flags and their defaults, and its
// TestEveryFeatureFlag fails when the release and this list part ways.
const flagsSection = `
## config-features

Every flag of Knative Serving 1.15's ` + "`config-features`" + `, with Knative's default, read by knit from ` + "`knit-system/config-features`" + ` and followed without a restart. Admission refuses a gated field while its flag is off, in Knative's words plus the flag's name (` + "`webhooks/`" + `; ` + "`TestEveryPodSpecFlag`" + ` tries every flag at every value).

| flag | default | knit dev | cluster |
|---|---|---|---|
| ` + "`multi-container`" + ` | Enabled | several containers per Revision | as knit dev |
| ` + "`multi-container-probing`" + ` | Disabled | probes on sidecars; the runtime runs them as the kubelet would, and the queue-proxy runs their network readiness probes too, so a replica whose sidecar is not ready takes no request | the kubelet runs them; the queue-proxy as in knit dev |
| ` + "`kubernetes.podspec-init-containers`" + ` | Disabled | init containers run in order to completion before the app, with the kubelet's statuses and back-off | the kubelet runs them |
| ` + "`kubernetes.podspec-persistent-volume-claim`" + `, ` + "`-persistent-volume-write`" + ` | Disabled | knit dev binds each claim to a directory in its state dir, kept across replicas and Revisions until the claim goes | the cluster's provisioner binds them |
| ` + "`kubernetes.podspec-volumes-emptydir`" + ` | Enabled | emptyDir volumes | as knit dev |
| ` + "`kubernetes.podspec-securitycontext`" + ` | Disabled | the pod's ` + "`securityContext`" + ` (runAsUser/Group, runAsNonRoot, fsGroup, supplementalGroups, seccompProfile), applied by the runtime | applied by the kubelet |
| ` + "`kubernetes.podspec-fieldref`" + ` | Disabled | env values from ` + "`fieldRef`" + `/` + "`resourceFieldRef`" + `, resolved by the runtime | resolved by the kubelet |
| ` + "`kubernetes.containerspec-addcapabilities`" + ` | Disabled | ` + "`capabilities.add`" + `, applied to image containers | applied by the kubelet |
| ` + "`secure-pod-defaults`" + ` | Disabled | restricted defaults per container where the Revision is silent (design.md: a container's explicit ` + "`runAsNonRoot: false`" + ` is kept) | as knit dev |
| ` + "`kubernetes.podspec-dryrun`" + ` | Allowed | the template's pod created as a server-side dry run at admission (Allowed: for a Service annotated ` + "`features.knative.dev/podspec-dryrun`" + `) | as knit dev |
| ` + "`queueproxy.resource-defaults`" + ` | Disabled | Knative's queue-proxy requests and limits, applied by the runtime's cgroups | applied by the kubelet |
| ` + "`queueproxy.mount-podinfo`" + ` | Disabled | the pod's annotations at ` + "`/etc/podinfo/annotations`" + ` in the queue-proxy (Allowed: per Revision, ` + "`features.knative.dev/queueproxy-podinfo`" + `) | as knit dev |
| ` + "`autodetect-http2`" + ` | Disabled | the queue-proxy's HTTP readiness probe offers an h2c upgrade and probes over HTTP/2 when the app takes it | as knit dev |
| ` + "`tag-header-based-routing`" + ` | Disabled | ` + "`Knative-Serving-Tag`" + ` on a Route's host picks the tag's target; the ingress appends ` + "`Knative-Serving-Tag`" + ` / ` + "`Knative-Serving-Default-Route`" + ` | as knit dev |
| ` + "`kubernetes.podspec-nodeselector`" + `, ` + "`-affinity`" + `, ` + "`-tolerations`" + ` | Disabled | this machine is the one node (the kubelet's hostname, os and arch labels, no taints): a pod whose nodeSelector, required node affinity or tolerations it does not meet stays Pending with the scheduler's words | the scheduler honours them |
| ` + "`kubernetes.podspec-topologyspreadconstraints`" + `, ` + "`-priorityclassname`" + `, ` + "`-schedulername`" + ` | Disabled | accepted into the Deployment; a priority class must exist (the API server's admission decides); on one node with no scheduler they place nothing | the scheduler honours them |
| ` + "`kubernetes.podspec-runtimeclassname`" + ` | Disabled | a class whose handler is runc runs; any other fails as containerd reports it | the kubelet's runtime class |
| ` + "`kubernetes.podspec-hostaliases`" + `, ` + "`-dnspolicy`" + `, ` + "`-dnsconfig`" + ` | Disabled | /etc/hosts and resolv.conf written as the kubelet writes them (knit dev has no cluster DNS: ClusterFirst reads as Default, as on a kubelet without one) | the kubelet applies them |
| ` + "`kubernetes.podspec-shareprocessnamespace`" + ` | Disabled | a replica's image containers share one PID namespace, held by a pause process; ko:// processes stay in the host's | the kubelet applies it |
`
