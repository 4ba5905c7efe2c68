//go:build !unit

package charttest

import (
	"context"
	"fmt"
	"maps"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// request is one API request a component makes (or must not be able to).
// ns "" is cluster-scoped; userNS stands for any namespace users deploy to.
type request struct {
	verb, group, resource, subresource, ns, name string
	// why: the code that makes it, or why it must be refused.
	why string
}

const userNS = "team-a"

func (r request) String() string {
	res := r.resource
	if r.group != "" {
		res += "." + r.group
	}
	if r.subresource != "" {
		res += "/" + r.subresource
	}
	where := "cluster"
	if r.ns != "" {
		where = "ns " + r.ns
	}
	if r.name != "" {
		res += " " + r.name
	}
	return fmt.Sprintf("%s %s in %s", r.verb, res, where)
}

// each expands one request to several verbs.
func each(verbs []string, r request) []request {
	out := make([]request, len(verbs))
	for i, v := range verbs {
		out[i] = r
		out[i].verb = v
	}
	return out
}

var read = []string{"get", "list", "watch"}

// needs is what each component's code does, and must be allowed: the
// table the chart's RBAC (templates/<component>/rbac.yaml) is written from.
var needs = map[string][]request{
	"controller": concat(
		each(read, request{group: "serving.knative.dev", resource: "services", ns: userNS, why: "service, gitrepository, announce watch and get Services"}),
		each(read, request{group: "serving.knative.dev", resource: "configurations", ns: userNS, why: "configuration, gc, route watch Configurations"}),
		each(read, request{group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "revision, configuration, route, gc, gitrepository, announce"}),
		each(read, request{group: "serving.knative.dev", resource: "routes", ns: userNS, why: "route, service, announce"}),
		[]request{
			{verb: "update", group: "serving.knative.dev", resource: "services", subresource: "status", ns: userNS, why: "service.go:45"},
			{verb: "update", group: "serving.knative.dev", resource: "configurations", subresource: "status", ns: userNS, why: "configuration.go:52"},
			{verb: "update", group: "serving.knative.dev", resource: "revisions", subresource: "status", ns: userNS, why: "revision.go:44"},
			{verb: "update", group: "serving.knative.dev", resource: "routes", subresource: "status", ns: userNS, why: "route.go:63"},
			{verb: "create", group: "serving.knative.dev", resource: "services", ns: userNS, why: "gitrepository/apply.go:28 server-side apply of a new Service"},
			{verb: "patch", group: "serving.knative.dev", resource: "services", ns: userNS, why: "gitrepository/apply.go:28 server-side apply"},
			{verb: "delete", group: "serving.knative.dev", resource: "services", ns: userNS, why: "gitrepository/apply.go:65 prune"},
			{verb: "create", group: "serving.knative.dev", resource: "configurations", ns: userNS, why: "service.go:57 owned.Ensure"},
			{verb: "update", group: "serving.knative.dev", resource: "configurations", ns: userNS, why: "service.go:57 owned.Ensure"},
			{verb: "create", group: "serving.knative.dev", resource: "routes", ns: userNS, why: "service.go:67 owned.Ensure"},
			{verb: "update", group: "serving.knative.dev", resource: "routes", ns: userNS, why: "service.go:67 owned.Ensure"},
			{verb: "create", group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "configuration.go:72, previews.go:103"},
			{verb: "patch", group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "route.go:117 routing-state labels"},
			{verb: "delete", group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "gc/controller.go:70, apply.go:86"},
			{verb: "update", group: "serving.knative.dev", resource: "services", subresource: "finalizers", ns: userNS, why: "owner of Configuration and Route"},
			{verb: "update", group: "serving.knative.dev", resource: "configurations", subresource: "finalizers", ns: userNS, why: "owner of Revisions"},
			{verb: "update", group: "serving.knative.dev", resource: "revisions", subresource: "finalizers", ns: userNS, why: "owner of Deployment and PodAutoscaler"},
		},
		each([]string{"get", "list", "watch", "create", "update"}, request{group: "apps", resource: "deployments", ns: userNS, why: "revision.go:62 owned.Ensure; Owns(Deployment)"}),
		each([]string{"get", "list", "watch", "create", "update"}, request{group: "autoscaling.internal.knative.dev", resource: "podautoscalers", ns: userNS, why: "revision.go:74 owned.Ensure"}),
		each([]string{"list", "watch"}, request{resource: "pods", ns: userNS, why: "revision/pods.go newPodCache: the image digests of Revisions' pods"}),
		[]request{{verb: "create", resource: "pods", ns: userNS, why: "webhooks/dryrun.go: a template's pod as a server-side dry run"}},
		each(read, request{group: "networking.internal.knative.dev", resource: "serverlessservices", ns: userNS, why: "serverlessservice/controller.go:36"}),
		[]request{
			{verb: "update", group: "networking.internal.knative.dev", resource: "serverlessservices", subresource: "status", ns: userNS, why: "sks.go:69"},
			{verb: "update", group: "networking.internal.knative.dev", resource: "serverlessservices", subresource: "finalizers", ns: userNS, why: "owner of Services and EndpointSlices"},
		},
		each([]string{"get", "list", "watch", "create", "update"}, request{resource: "services", ns: userNS, why: "sks.go:76 owned.Ensure; route/placeholders.go"}),
		[]request{
			{verb: "delete", resource: "services", ns: userNS, why: "route/placeholders.go: a removed tag's Service"},
			{verb: "update", group: "serving.knative.dev", resource: "routes", subresource: "finalizers", ns: userNS, why: "owner of its placeholder Services"},
		},
		each([]string{"get", "list", "watch", "create", "update", "delete"}, request{group: "discovery.k8s.io", resource: "endpointslices", ns: userNS, why: "sks.go:88,112,124,135"}),
		each(read, request{group: "discovery.k8s.io", resource: "endpointslices", ns: "knit-system", why: "sks.go:88 the activators' slices"}),
		each([]string{"get", "create", "update"}, request{resource: "endpoints", ns: userNS, why: "endpoints/endpoints.go:47,53,69 the public Services' Endpoints"}),
		each(read, request{group: "serving.knative.dev", resource: "domainmappings", ns: userNS, why: "domainmapping/controller.go SetupWithManager"}),
		[]request{
			{verb: "patch", group: "serving.knative.dev", resource: "domainmappings", ns: userNS, why: "domainmapping/reconcile.go: its finalizer"},
			{verb: "get", resource: "secrets", ns: userNS, name: "shop-tls", why: "domainmapping/tls.go: spec.tls, uncached"},
			{verb: "update", group: "serving.knative.dev", resource: "domainmappings", subresource: "status", ns: userNS, why: "domainmapping/reconcile.go"},
		},
		each([]string{"get", "list", "watch", "create", "delete"}, request{group: "networking.internal.knative.dev", resource: "clusterdomainclaims", why: "domainmapping/claim.go"}),
		each(read, request{group: "knit.dev", resource: "gitrepositories", ns: userNS, why: "gitrepository/controller.go:60"}),
		each(read, request{group: "knit.dev", resource: "pullrequests", ns: userNS, why: "gitrepository.go:104"}),
		each(read, request{group: "knit.dev", resource: "eventsinks", ns: userNS, why: "announce/sinks.go:45"}),
		[]request{
			{verb: "update", group: "knit.dev", resource: "gitrepositories", subresource: "status", ns: userNS, why: "gitrepository.go:43"},
			{verb: "update", group: "knit.dev", resource: "pullrequests", subresource: "status", ns: userNS, why: "status.go:82"},
			{verb: "update", group: "knit.dev", resource: "eventsinks", subresource: "status", ns: userNS, why: "sinks.go:88"},
			{verb: "get", resource: "secrets", ns: userNS, name: "git-credentials", why: "gitrepository.go:96 credentials, uncached"},
			{verb: "get", resource: "secrets", ns: userNS, name: "regcred", why: "revision/resolve: a Revision's image pull secrets, uncached"},
			{verb: "get", resource: "serviceaccounts", ns: userNS, name: "default", why: "revision/resolve: the pull secrets of a Revision's ServiceAccount"},
			{verb: "get", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "knit-defaulting", why: "webhooks/certs caBundle"},
			{verb: "patch", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "knit-defaulting", why: "webhooks/certs caBundle"},
			{verb: "get", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "knit-validation", why: "webhooks/certs caBundle"},
			{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "knit-validation", why: "webhooks/certs caBundle"},
			{verb: "create", resource: "events", ns: userNS, why: "events on reconciled objects"},
			{verb: "patch", group: "events.k8s.io", resource: "events", ns: userNS, why: "events on reconciled objects"},
			{verb: "create", resource: "events", ns: "knit-system", why: "leader election"},
		},
		each(read, request{resource: "configmaps", ns: "knit-system", why: "config/watch.go"}),
		each([]string{"create", "patch", "delete"}, request{resource: "configmaps", ns: "knit-system", why: "gitsync/eventstore: undelivered CloudEvents per EventSink"}),
		[]request{
			{verb: "get", resource: "secrets", ns: "knit-system", name: "knit-webhook-certs", why: "webhooks/certs ensureSecret"},
			{verb: "update", resource: "secrets", ns: "knit-system", name: "knit-webhook-certs", why: "webhooks/certs rotation"},
			{verb: "create", resource: "secrets", ns: "knit-system", why: "webhooks/certs first start"},
			{verb: "get", resource: "secrets", ns: "knit-system", name: "knit-gitserver-token", why: "gitrepository/gitserver.go: fetches from knit's Git server present its token"},
			{verb: "get", resource: "secrets", ns: "knit-system", name: "route.default.hello", why: "route/certificates: a Route's certificate"},
			{verb: "update", resource: "secrets", ns: "knit-system", name: "route.default.hello", why: "route/certificates: a renewal"},
			{verb: "delete", resource: "secrets", ns: "knit-system", name: "acme-http01-0123456789abcdef", why: "route/certificates: a challenge response withdrawn"},
			{verb: "patch", group: "knit.dev", resource: "gitrepositories", ns: userNS, name: "hello", why: "gitrepository/deletion.go: its finalizer"},
			{verb: "get", resource: "namespaces", name: userNS, why: "gitrepository/deletion.go: a namespace being deleted"},
			{verb: "impersonate", resource: "serviceaccounts", ns: userNS, name: "deployer", why: "gitrepository/identity.go: a sync writes as spec.serviceAccountName"},
			{verb: "get", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", name: "knit-controller", why: "leader election"},
			{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", name: "knit-controller", why: "leader election"},
			{verb: "create", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", why: "leader election"},
		},
	),
	"autoscaler": concat(
		each(read, request{group: "autoscaling.internal.knative.dev", resource: "podautoscalers", ns: userNS, why: "podautoscaler/controller.go:32"}),
		[]request{
			{verb: "update", group: "autoscaling.internal.knative.dev", resource: "podautoscalers", subresource: "status", ns: userNS, why: "podautoscaler.go:87"},
			{verb: "update", group: "autoscaling.internal.knative.dev", resource: "podautoscalers", subresource: "finalizers", ns: userNS, why: "owner of the SKS"},
		},
		each([]string{"get", "list", "watch", "create", "update"}, request{group: "networking.internal.knative.dev", resource: "serverlessservices", ns: userNS, why: "podautoscaler.go:52 owned.Ensure"}),
		each([]string{"get", "list", "watch", "patch"}, request{group: "apps", resource: "deployments", ns: userNS, why: "podautoscaler.go:39,76 scale by merge patch"}),
		each(read, request{group: "discovery.k8s.io", resource: "endpointslices", ns: userNS, why: "dataplane/kpa/collect.go:79"}),
		each(read, request{resource: "configmaps", ns: "knit-system", why: "config/watch.go"}),
		[]request{
			{verb: "get", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", name: "knit-autoscaler", why: "leader election"},
			{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", name: "knit-autoscaler", why: "leader election"},
			{verb: "create", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", why: "leader election"},
			{verb: "create", resource: "events", ns: "knit-system", why: "leader election"},
		},
	),
	"activator": concat(
		each(read, request{group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "dataplane/activator/endpoints.go:45,90"}),
		each(read, request{group: "discovery.k8s.io", resource: "endpointslices", ns: userNS, why: "dataplane/activator/endpoints.go:45,98"}),
	),
	"ingress": concat(
		each(read, request{group: "serving.knative.dev", resource: "routes", ns: userNS, why: "dataplane/ingress/builder.go SetupWithManager, Reconcile"}),
		each(read, request{group: "discovery.k8s.io", resource: "endpointslices", ns: userNS, why: "dataplane/ingress/builder.go SetupWithManager, Reconcile"}),
		each(read, request{group: "serving.knative.dev", resource: "domainmappings", ns: userNS, why: "dataplane/ingress/builder.go SetupWithManager, Reconcile"}),
		// A list or watch selecting metadata.name is authorized as a
		// request for that name: ingress.RestrictCache's.
		each(read, request{resource: "configmaps", ns: "knit-system", name: "config-features", why: "dataplane/ingress/builder.go readFeatures: tag-header-based-routing"}),
		each(read, request{resource: "configmaps", ns: "knit-system", name: "config-network", why: "dataplane/ingress/edge.go readNetwork: http-protocol"}),
		each(read, request{resource: "secrets", ns: "knit-system", why: "dataplane/ingress/edge.go certCache.read: certificates"}),
	),
	"gitserver": concat(
		each([]string{"get", "list", "watch", "create", "patch"}, request{group: "knit.dev", resource: "gitrepositories", ns: userNS, why: "gitsync/hub: ensureRepository, RequestSync, webhookSecret"}),
		each([]string{"get", "list", "watch", "create", "update"}, request{group: "knit.dev", resource: "pullrequests", ns: userNS, why: "gitsync/pullrequest.Upsert"}),
		[]request{
			{verb: "get", resource: "secrets", ns: userNS, name: "forge-webhook", why: "gitsync/hub webhookSecret"},
			{verb: "get", resource: "secrets", ns: "knit-system", name: "knit-gitserver-token", why: "gitsync/hub TokenSecret.Token on every Git request"},
			{verb: "create", resource: "secrets", ns: "knit-system", why: "gitsync/hub TokenSecret.Ensure on first start"},
		},
	),
}

// buildNeeds are the controller's requests when builds are on
// (build.registry set, gitsync/build): TestAPIServer applies the chart so.
var buildNeeds = concat(
	each([]string{"get", "list", "watch", "create", "delete"}, request{group: "batch", resource: "jobs", ns: "knit-system", why: "builder.go Resolve and start; the Job watch"}),
	[]request{
		{verb: "list", resource: "pods", ns: "knit-system", why: "builder.go result: the termination message"},
		{verb: "delete", resource: "secrets", ns: "knit-system", why: "builder.go dropCredentials"},
		{verb: "create", resource: "secrets", ns: "knit-system", why: "builder.go copyCredentials"},
		{verb: "get", resource: "persistentvolumeclaims", ns: "knit-system", why: "builder.go ensureCache"},
		{verb: "create", resource: "persistentvolumeclaims", ns: "knit-system", why: "builder.go ensureCache"},
	},
)

// buildRefused: builds stay in knit's namespace.
var buildRefused = []request{
	{verb: "create", group: "batch", resource: "jobs", ns: userNS, why: "builds run in knit-system only"},
	{verb: "create", resource: "persistentvolumeclaims", ns: userNS, why: "the caches' claim is in knit-system"},
	{verb: "delete", resource: "persistentvolumeclaims", ns: "knit-system", why: "the caches' claim is the operator's to drop"},
}

// refused is a sample of what each component has no business doing: a
// wider grant than the code needs would show here.
var refused = map[string][]request{
	"controller": {
		{verb: "patch", group: "apps", resource: "deployments", ns: userNS, why: "replicas are the autoscaler's"},
		{verb: "delete", group: "apps", resource: "deployments", ns: userNS, why: "garbage collection deletes owned Deployments"},
		{verb: "update", group: "autoscaling.internal.knative.dev", resource: "podautoscalers", subresource: "status", ns: userNS, why: "the autoscaler's"},
		{verb: "create", group: "networking.internal.knative.dev", resource: "serverlessservices", ns: userNS, why: "the autoscaler makes SKSs"},
		{verb: "list", resource: "secrets", ns: userNS, why: "credentials are read one by one, uncached"},
		{verb: "update", resource: "secrets", ns: userNS, name: "someone-elses", why: "knit-system's only"},
		{verb: "list", resource: "secrets", ns: "knit-system", why: "read by name, uncached"},
		{verb: "create", resource: "configmaps", ns: userNS, why: "not a kind Git deploys by default (controller.gitopsRules)"},
		{verb: "list", resource: "configmaps", ns: userNS, why: "config lives in knit-system only"},
		{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "someone-elses", why: "only knit's configurations"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", name: "knit-autoscaler", why: "the autoscaler's lease"},
		{verb: "get", resource: "pods", ns: userNS, why: "pods are read through the revision controller's cache alone"},
		{verb: "list", resource: "endpoints", ns: userNS, why: "Endpoints are read one by one, uncached"},
		{verb: "delete", resource: "endpoints", ns: userNS, why: "garbage collection deletes a Service's Endpoints"},
		{verb: "delete", resource: "pods", ns: userNS, why: "the controller creates pods as dry runs alone"},
		{verb: "create", group: "knit.dev", resource: "gitrepositories", ns: userNS, why: "users and the gitserver create them"},
		{verb: "impersonate", resource: "users", name: "admin", why: "it impersonates service accounts only"},
		{verb: "impersonate", resource: "groups", name: "system:masters", why: "it impersonates service accounts only"},
		{verb: "impersonate", group: "authentication.k8s.io", resource: "userextras", why: "it impersonates service accounts only"},
	},
	"autoscaler": {
		{verb: "update", group: "apps", resource: "deployments", ns: userNS, why: "it patches replicas only"},
		{verb: "create", group: "apps", resource: "deployments", ns: userNS, why: "the controller's"},
		{verb: "delete", group: "networking.internal.knative.dev", resource: "serverlessservices", ns: userNS, why: "garbage collection"},
		{verb: "list", group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "it reads PodAutoscalers only"},
		{verb: "get", resource: "secrets", ns: "knit-system", why: "no secrets"},
		{verb: "create", resource: "events", ns: userNS, why: "it records election events in knit-system only"},
		{verb: "update", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", name: "knit-controller", why: "the controller's lease"},
	},
	"activator": {
		{verb: "list", group: "serving.knative.dev", resource: "routes", ns: userNS, why: "the ingress's"},
		{verb: "update", group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "read only"},
		{verb: "list", resource: "configmaps", ns: "knit-system", why: "no config store"},
		{verb: "get", resource: "secrets", ns: userNS, why: "no secrets"},
		{verb: "create", group: "coordination.k8s.io", resource: "leases", ns: "knit-system", why: "no leader"},
	},
	"ingress": {
		{verb: "list", group: "serving.knative.dev", resource: "revisions", ns: userNS, why: "routes only"},
		{verb: "list", group: "networking.internal.knative.dev", resource: "clusterdomainclaims", why: "the controller's"},
		{verb: "create", group: "discovery.k8s.io", resource: "endpointslices", ns: userNS, why: "read only"},
		{verb: "get", resource: "secrets", ns: userNS, why: "certificates in knit-system only"},
		{verb: "list", resource: "secrets", ns: userNS, why: "certificates in knit-system only"},
		{verb: "update", resource: "secrets", ns: "knit-system", why: "read only"},
		{verb: "list", resource: "configmaps", ns: "knit-system", why: "config-features and config-network alone, listed by name"},
		{verb: "watch", resource: "configmaps", ns: "knit-system", why: "config-features and config-network alone, watched by name"},
		{verb: "get", resource: "configmaps", ns: "knit-system", name: "config-gc", why: "config-features and config-network alone"},
		{verb: "update", resource: "configmaps", ns: "knit-system", name: "config-features", why: "read only"},
		{verb: "list", resource: "configmaps", ns: userNS, why: "config lives in knit-system only"},
	},
	"gitserver": {
		{verb: "list", resource: "secrets", ns: userNS, why: "one Secret per delivery, uncached"},
		{verb: "delete", group: "knit.dev", resource: "gitrepositories", ns: userNS, why: "never deletes"},
		{verb: "update", group: "knit.dev", resource: "gitrepositories", subresource: "status", ns: userNS, why: "the controller's"},
		{verb: "create", group: "serving.knative.dev", resource: "services", ns: userNS, why: "the controller deploys"},
		{verb: "create", resource: "secrets", ns: userNS, why: "its token lives in knit-system only"},
		{verb: "update", resource: "secrets", ns: "knit-system", name: "knit-gitserver-token", why: "made once, rotated by the operator"},
		{verb: "delete", resource: "secrets", ns: "knit-system", name: "knit-webhook-certs", why: "the controller's"},
	},
}

func concat(parts ...[]request) []request {
	var out []request
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// checkRBAC asks the API server, through SubjectAccessReviews, whether
// each component's ServiceAccount may make the requests its code makes,
// and may not make the refused ones.
func checkRBAC(t *testing.T, client kubernetes.Interface) {
	needs, refused := maps.Clone(needs), maps.Clone(refused)
	needs["controller"] = concat(needs["controller"], buildNeeds)
	refused["controller"] = concat(refused["controller"], buildRefused)
	for component, reqs := range needs {
		t.Run("rbac "+component, func(t *testing.T) {
			for _, r := range reqs {
				if allowed, reason := review(t, client, component, r); !allowed {
					t.Errorf("knit-%s may not %s (%s), which it needs: %s", component, r, r.why, reason)
				}
			}
			for _, r := range refused[component] {
				if allowed, reason := review(t, client, component, r); allowed {
					t.Errorf("knit-%s may %s, which it should not (%s): %s", component, r, r.why, reason)
				}
			}
		})
	}
}

func review(t *testing.T, client kubernetes.Interface, component string, r request) (bool, string) {
	t.Helper()
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   "system:serviceaccount:knit-system:knit-" + component,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:knit-system", "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: r.ns, Verb: r.verb, Group: r.group, Resource: r.resource, Subresource: r.subresource, Name: r.name,
		},
	}}
	got, err := client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("SubjectAccessReview for %s: %v", r, err)
	}
	return got.Status.Allowed, got.Status.Reason
}
