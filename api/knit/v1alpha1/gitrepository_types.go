package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// GitRepository is a Git repository knit deploys from: each tracked branch
// is rendered with kustomize and applied, each commit becomes a Revision.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gitrepo;repo,categories=all;knit
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.url`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GitRepository struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GitRepositorySpec `json:"spec"`
	// +optional
	Status GitRepositoryStatus `json:"status,omitempty"`
}

// GitProvider selects how forge webhooks for the repository are verified.
// +kubebuilder:validation:Enum=generic;github;gitlab;gitea
type GitProvider string

// Forges whose push and pull_request webhooks knit understands.
const (
	GitProviderGeneric GitProvider = "generic"
	GitProviderGitHub  GitProvider = "github"
	GitProviderGitLab  GitProvider = "gitlab"
	GitProviderGitea   GitProvider = "gitea"
)

// DeletionPolicy is a GitRepository's spec.deletionPolicy.
type DeletionPolicy string

// The deletion policies.
const (
	DeletionPolicyDelete DeletionPolicy = "Delete"
	DeletionPolicyOrphan DeletionPolicy = "Orphan"
)

// Decryption says how knit decrypts the SOPS-encrypted files of a
// GitRepository's commits, as Flux's spec.decryption does.
type Decryption struct {
	// Provider is what encrypted the files: sops.
	// +kubebuilder:validation:Enum=sops
	Provider string `json:"provider"`
	// SecretRef names a Secret in the GitRepository's namespace whose
	// keys ending in .agekey hold the age identities (one
	// AGE-SECRET-KEY-1… per line) the files were encrypted for.
	SecretRef corev1.LocalObjectReference `json:"secretRef"`
}

// Verification says which signers a GitRepository's deployed commits must
// be signed by, as Flux's spec.verify does.
type Verification struct {
	// Mode is what is verified: HEAD, the commit each tracked branch's
	// head and each previewed pull request's head points at.
	// +kubebuilder:validation:Enum=HEAD
	// +kubebuilder:default=HEAD
	// +optional
	Mode string `json:"mode,omitempty"`
	// SecretRef names a Secret in the GitRepository's namespace holding
	// the trusted keys: ASCII-armored OpenPGP public keys (gpg --export
	// --armor) under any key, and SSH allowed signers (ssh-keygen's
	// format, as git's gpg.ssh.allowedSignersFile) under the key
	// allowed_signers.
	SecretRef corev1.LocalObjectReference `json:"secretRef"`
}

// DecryptionProviderSOPS is the one Decryption.Provider.
const DecryptionProviderSOPS = "sops"

// GitRepositoryFinalizer holds a GitRepository's deletion until what it
// deployed is deleted (DeletionPolicyDelete) or let go.
const GitRepositoryFinalizer = "knit.dev/gitrepository"

// GitRepositorySpec says where the repository is and what to deploy from it.
type GitRepositorySpec struct {
	// URL of the repository: https:// or http://, or ssh:// or Git's
	// scp-like git@host:org/repo.git with a deploy key and known_hosts in
	// spec.secretRef (knit's egress policy refuses other schemes, and
	// loopback, link-local and the control plane's own addresses unless
	// config-network's egress-allow lists them). Repositories pushed to
	// knit's own Git server get theirs filled in.
	// +kubebuilder:validation:MinLength=1
	URL string `json:"url"`
	// Branches to track; the first one is the main branch, whose Services
	// keep their own names. Defaults to [main].
	// +optional
	Branches []string `json:"branches,omitempty"`
	// Path inside the repository holding the kustomization.yaml.
	// +kubebuilder:default="."
	// +optional
	Path string `json:"path,omitempty"`
	// Interval between polls; forge webhooks trigger a fetch at once.
	// +kubebuilder:default="1m"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
	// SecretRef names a Secret in the same namespace with credentials
	// (keys username and password, or bearerToken; GitHub App keys
	// githubAppID, githubAppInstallationID, githubAppPrivateKey; for SSH
	// URLs identity, known_hosts and the key's password) and the forge
	// webhook secret (key webhookSecret).
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
	// Provider whose webhook signatures to verify.
	// +kubebuilder:default=generic
	// +optional
	Provider GitProvider `json:"provider,omitempty"`
	// Suspend stops syncing without deleting what was deployed.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// DeletionPolicy is what deleting this GitRepository does to what it
	// deployed: Delete (the default, as Flux prunes a Kustomization's
	// objects) deletes every object it applied and its preview Revisions;
	// Orphan leaves them running, no longer managed.
	// +kubebuilder:validation:Enum=Delete;Orphan
	// +optional
	DeletionPolicy DeletionPolicy `json:"deletionPolicy,omitempty"`
	// AllowedKinds are the kinds of objects a commit may deploy, each
	// Kind.group ("Deployment.apps"; the core group's alone:
	// "ConfigMap"). Empty: Knative Services, Configurations and Routes,
	// ConfigMaps and knit's EventSinks. A commit holding another kind
	// changes nothing and says which. GitRepositories, RBAC and
	// cluster-scoped objects are never deployed from Git, listed or not:
	// a push must not be able to reach credentials or rights; nor are
	// Secrets, but those SOPS-encrypted in Git (spec.decryption).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[A-Z][A-Za-z0-9]*(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	AllowedKinds []string `json:"allowedKinds,omitempty"`
	// ServiceAccountName, when set, is the ServiceAccount in this
	// namespace whose rights every write of a sync (apply, prune,
	// pull-request previews) is made with: knit impersonates it, as Flux's
	// kustomize-controller does, so a commit can do only what its RBAC
	// allows. Empty: knit's own identity, limited by AllowedKinds.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Decryption, when set, decrypts the commit's SOPS-encrypted files
	// in memory before rendering, with the age identities of a Secret,
	// and lets SOPS-encrypted Secrets be deployed (plain-text Secrets
	// never are). Without it, an encrypted file refuses its commit.
	// +optional
	Decryption *Decryption `json:"decryption,omitempty"`
	// Verify, when set, deploys (and previews) only commits signed by a
	// key its Secret trusts; any other commit is refused, its condition
	// saying who signed it or that nobody did, and what served before
	// keeps serving.
	// +optional
	Verify *Verification `json:"verify,omitempty"`
	// Rollout, when set, rolls out every new Revision a push brings to a
	// tracked branch in steps, with the analysis of pull-request canaries
	// ("10,50 every 1m", the grammar of knit.dev/canary): the Service's
	// own knit.dev/rollout annotation overrides it ("off" opts out). A
	// failing step sends all traffic back to the Revision that served
	// before and keeps the new one off until the next push.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Rollout string `json:"rollout,omitempty"`
}

// GitRepositoryStatus reports what was last synced from each branch.
type GitRepositoryStatus struct {
	duckv1.Status `json:",inline"`

	// Branches records the last commit seen and applied per tracked branch.
	// +optional
	Branches []BranchStatus `json:"branches,omitempty"`
	// Inventory lists every object the last sync applied, so the next one
	// can prune what a later commit removed.
	// +optional
	Inventory []ObjectReference `json:"inventory,omitempty"`
	// Builds are the ko:// images built on the cluster for this
	// repository's commits, newest first: the digest each resolved to, or
	// why it failed. A build whose key is listed is never run again.
	// +optional
	Builds []BuildStatus `json:"builds,omitempty"`
	// Rollouts are the stepped rollouts of the Services a push changed
	// (spec.rollout, knit.dev/rollout): the one running, promoted or
	// rolled back per Service, until a push replaces it.
	// +optional
	Rollouts []RolloutStatus `json:"rollouts,omitempty"`
	// Previews are what the last pass did for each open pull request into
	// a tracked branch, by number. The GitRepository reconciler is their
	// only writer; each PullRequest's reconciler reads its entry to write
	// the PullRequest's status. They live here, not in the reconciler's
	// memory, so that a restart keeps them.
	// +listType=map
	// +listMapKey=number
	// +optional
	Previews []PreviewStatus `json:"previews,omitempty"`
}

// RolloutStatus is a stepped rollout of one Service's new Revision: the
// Revision that served before keeps the rest of the traffic and is what
// the new one is compared with.
type RolloutStatus struct {
	// Branch the push was to.
	Branch string `json:"branch"`
	// Service is the Service's name as applied.
	Service string `json:"service"`
	// Revision is the new Revision being rolled out.
	Revision string `json:"revision"`
	// Stable is the Revision that served before the push: it keeps the
	// traffic the new one does not get, and all of it after a rollback.
	Stable string `json:"stable"`
	// CanaryStatus is the rollout's progress, as a pull request's canary
	// reports it; Commit is the push's head.
	CanaryStatus `json:",inline"`
}

// PreviewPhase is where a pull request's preview stands.
// +kubebuilder:validation:Enum=Deploying;Ready;Failed
type PreviewPhase string

// The phases of a preview.
const (
	// PreviewDeploying: the head's images build or its Revisions are not
	// ready yet.
	PreviewDeploying PreviewPhase = "Deploying"
	// PreviewReady: every preview Revision is ready, so its tag carries
	// traffic.
	PreviewReady PreviewPhase = "Ready"
	// PreviewFailed: the head could not be previewed; Message says why.
	PreviewFailed PreviewPhase = "Failed"
)

// PreviewStatus is what one pass did for one open pull request: the
// preview Revisions it made of the head commit and whether they serve.
type PreviewStatus struct {
	// Number of the pull request on its forge.
	Number int64 `json:"number"`
	// Commit is the full SHA of the head the preview was made from,
	// empty when the head could not be read.
	// +optional
	Commit string `json:"commit,omitempty"`
	// Phase is Deploying, Ready or Failed.
	Phase PreviewPhase `json:"phase"`
	// RevisionNames are the preview Revisions, one per Service of the
	// base branch the head changes.
	// +optional
	RevisionNames []string `json:"revisionNames,omitempty"`
	// BaseService is the first previewed Service's name on the base
	// branch: whose traffic carries the preview's tag and canary.
	// +optional
	BaseService string `json:"baseService,omitempty"`
	// CanaryAnnotation is that Service's knit.dev/canary annotation as
	// the head renders it.
	// +optional
	CanaryAnnotation string `json:"canaryAnnotation,omitempty"`
	// Services are the preview Services of the Services the head adds,
	// each a Service of its own: the first one's URL is the pull
	// request's when no base Service carries its tag.
	// +optional
	Services []string `json:"services,omitempty"`
	// Message is why the preview failed.
	// +optional
	Message string `json:"message,omitempty"`
}

// BuildPhase is where one build is.
type BuildPhase string

// The phases of a build.
const (
	// BuildRunning: the build Job runs; the branch waits for it.
	BuildRunning BuildPhase = "Running"
	// BuildSucceeded: the image was pushed; Image names its digest.
	BuildSucceeded BuildPhase = "Succeeded"
	// BuildFailed: the build failed; Message quotes the compiler.
	BuildFailed BuildPhase = "Failed"
)

// BuildStatus is one ko:// image built from one source tree.
type BuildStatus struct {
	// Key identifies what was built: the toolchain, the platform, the
	// commit's tree and the package. Equal keys build equal images.
	Key string `json:"key"`
	// Source is the ko:// image as the commit names it.
	Source string `json:"source"`
	// Commit is the first commit built with this key.
	Commit string `json:"commit"`
	// Phase is Running, Succeeded or Failed.
	Phase BuildPhase `json:"phase"`
	// Job is the build Job, namespace/name: `kubectl logs -n <namespace>
	// job/<name>` shows the build's output while the Job is kept.
	Job string `json:"job"`
	// Image is the pushed image by digest once the build succeeded.
	// +optional
	Image string `json:"image,omitempty"`
	// Message is why the build failed: the compiler's first error lines.
	// +optional
	Message string `json:"message,omitempty"`
	// StartTime is when the Job was created; CompletionTime when its
	// result was read.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Durations of the build's steps as the builder measured them
	// (fetch, compile, push), e.g. "fetch=0.4s compile=3.1s push=0.2s".
	// +optional
	Durations string `json:"durations,omitempty"`
}

// BranchStatus is one tracked branch's sync state.
type BranchStatus struct {
	// Name of the branch.
	Name string `json:"name"`
	// Commit is the full SHA last fetched.
	// +optional
	Commit string `json:"commit,omitempty"`
	// AppliedCommit is the full SHA last rendered and applied successfully.
	// +optional
	AppliedCommit string `json:"appliedCommit,omitempty"`
	// LastSyncTime is when the branch was last synced.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// Error is why the last sync of Commit failed, empty when it succeeded.
	// +optional
	Error string `json:"error,omitempty"`
	// Signer is who signed AppliedCommit, when spec.verify is set.
	// +optional
	Signer string `json:"signer,omitempty"`
	// Reported is the knit/deploy commit status last set on the forge
	// for this branch's head, so a later pass does not set it again.
	// +optional
	Reported *DeployReport `json:"reported,omitempty"`
}

// DeployReport is the knit/deploy commit status knit last set on a
// tracked branch's head, on forges it reports to.
type DeployReport struct {
	// Commit the status was set on.
	Commit string `json:"commit"`
	// State set: pending, success or failure.
	State string `json:"state"`
}

// ObjectReference names one applied object.
type ObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Branch the object was applied from; a branch whose latest commit
	// failed to sync keeps its objects.
	// +optional
	Branch string `json:"branch,omitempty"`
	// PullRequest numbers the pull request into Branch whose preview the
	// object is (a preview Service, a copy of a ConfigMap or EventSink);
	// 0 for what Branch itself deploys.
	// +optional
	PullRequest int64 `json:"pullRequest,omitempty"`
}

// GitRepository condition types beyond Ready.
const (
	// GitRepositoryConditionFetched: the tracked branches were fetched.
	GitRepositoryConditionFetched duckv1.ConditionType = "Fetched"
	// GitRepositoryConditionSynced: the fetched commits were rendered and applied.
	GitRepositoryConditionSynced duckv1.ConditionType = "Synced"
	// GitRepositoryConditionRevisionsReady: every Service applied from the
	// repository serves its latest commit's Revision.
	GitRepositoryConditionRevisionsReady duckv1.ConditionType = "RevisionsReady"
	// GitRepositoryConditionRollouts is informational, never moving Ready:
	// Unknown while a stepped rollout of a push runs, False once one was
	// rolled back (until the next push), True otherwise.
	GitRepositoryConditionRollouts duckv1.ConditionType = "Rollouts"
)

// GitRepositoryConditions is the GitRepository's checklist.
var GitRepositoryConditions = duckv1.NewLivingConditionSet(GitRepositoryConditionFetched, GitRepositoryConditionSynced, GitRepositoryConditionRevisionsReady)

// +kubebuilder:object:root=true

// GitRepositoryList is a list of GitRepositories.
type GitRepositoryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GitRepository `json:"items"`
}
