package v1alpha1

// Labels the ServerlessService reconciler puts on the Services it makes,
// Knative's keys and values. Kubernetes' endpointslice controller (and
// knit dev's runtime) copies a Service's labels onto its EndpointSlices,
// so a slice names its SKS and its kind by label: the way from a slice
// back to its SKS and Revision, since a private Service's name may be
// shortened (internal/names) and cannot be parsed.
const (
	// ServerlessServiceLabelKey names the SKS a Service belongs to; an
	// SKS is named for its Revision.
	ServerlessServiceLabelKey = GroupName + "/serverlessservice"
	// ServiceTypeLabelKey says which of an SKS's Services this is.
	ServiceTypeLabelKey = GroupName + "/serviceType"
	// ServiceTypePrivate marks the Service over the replicas themselves.
	ServiceTypePrivate = "Private"
	// ServiceTypePublic marks the Service the ingress routes to.
	ServiceTypePublic = "Public"
)

// Certificates the ingress serves are kubernetes.io/tls Secrets in knit's
// own namespace carrying CertificateLabel: the operator's (bring your own
// certificate for a domain or a wildcard) and the ones knit's controller
// obtains for Routes. Reading them only there keeps the Internet-facing
// ingress away from every tenant's Secrets: its Role grants Secrets in
// that one namespace, nothing cluster-wide.
const (
	// CertificateLabel marks a Secret the ingress reads: a certificate
	// (any value but CertificateLabelChallenge) or an ACME HTTP-01
	// response (CertificateLabelChallenge). One label for both keeps the
	// ingress's cache to one selector.
	CertificateLabel = "knit.dev/certificate"
	// CertificateLabelChallenge marks an HTTP-01 response: data host,
	// token and keyAuthorization, served at
	// http://<host>/.well-known/acme-challenge/<token>.
	CertificateLabelChallenge = "acme-http01"
	// CertificateNamespaceLabel, when set, limits a certificate to the
	// hosts of Routes in that namespace, so a certificate issued or
	// copied for one tenant never answers for another's host. Without it
	// the certificate is the operator's and serves any host it names.
	CertificateNamespaceLabel = "knit.dev/certificate-namespace"
	// CertificateRouteLabel names the Route ("<namespace>.<name>") a
	// certificate was obtained for.
	CertificateRouteLabel = "knit.dev/certificate-route"
)

// The data keys of a CertificateLabelChallenge Secret.
const (
	ChallengeHostKey             = "host"
	ChallengeTokenKey            = "token"
	ChallengeKeyAuthorizationKey = "keyAuthorization"
)
