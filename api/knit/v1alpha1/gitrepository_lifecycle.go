package v1alpha1

// Reasons of the GitRepository's and PullRequest's conditions, spelled
// once. Two more live with the code that decides them in
// controllers/gitrepository: EgressDenied (Fetched) and Forbidden (Synced).
const (
	// ReasonCredentialsNotFound: the Secret spec.secretRef names cannot be read.
	ReasonCredentialsNotFound = "CredentialsNotFound"
	// ReasonFetchFailed: the remote could not be fetched.
	ReasonFetchFailed = "FetchFailed"
	// ReasonTooLarge: the branch heads' files weigh more than one fetch
	// may bring (the controller's --git-max-fetch-size); they are neither
	// fetched nor synced, and what was deployed before keeps serving
	// (Fetched and Synced both say so).
	ReasonTooLarge = "TooLarge"
	// ReasonBuilding: a branch's ko:// images are still building.
	ReasonBuilding = "Building"
	// ReasonCommitRejected: a commit could not be rendered or applied.
	ReasonCommitRejected = "CommitRejected"
	// ReasonRevisionFailed: a Service applied from the repository, or a
	// pull request's preview, has a failed latest Revision.
	ReasonRevisionFailed = "RevisionFailed"
	// ReasonDeploying: a Revision, or a preview, is not ready yet.
	ReasonDeploying = "Deploying"
)

// InitializeConditions shows every condition the GitRepository owns,
// Unknown where it has none yet.
func (gs *GitRepositoryStatus) InitializeConditions() {
	GitRepositoryConditions.Manage(&gs.Status).InitializeConditions()
}

// MarkFetched: the last fetch of the tracked branches succeeded.
func (gs *GitRepositoryStatus) MarkFetched() {
	GitRepositoryConditions.Manage(&gs.Status).MarkTrue(GitRepositoryConditionFetched)
}

// MarkFetchFailed: the remote could not be fetched (ReasonFetchFailed,
// ReasonCredentialsNotFound, ReasonTooLarge, or egress refused it).
func (gs *GitRepositoryStatus) MarkFetchFailed(reason, message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkFalse(GitRepositoryConditionFetched, reason, message)
}

// MarkSynced: every tracked branch's commit is applied.
func (gs *GitRepositoryStatus) MarkSynced() {
	GitRepositoryConditions.Manage(&gs.Status).MarkTrue(GitRepositoryConditionSynced)
}

// MarkSyncFailed: a commit was refused (ReasonCommitRejected,
// ReasonTooLarge, or the repository's ServiceAccount lacks rights); what
// was deployed before keeps serving.
func (gs *GitRepositoryStatus) MarkSyncFailed(reason, message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkFalse(GitRepositoryConditionSynced, reason, message)
}

// MarkBuilding: a branch waits for its images; message names the builds.
func (gs *GitRepositoryStatus) MarkBuilding(message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkUnknown(GitRepositoryConditionSynced, ReasonBuilding, message)
}

// MarkRevisionsReady: every Service applied serves its latest Revision.
func (gs *GitRepositoryStatus) MarkRevisionsReady() {
	GitRepositoryConditions.Manage(&gs.Status).MarkTrue(GitRepositoryConditionRevisionsReady)
}

// MarkRevisionsFailed: a Service's latest Revision failed; message names
// the Service, the Revision and its commit.
func (gs *GitRepositoryStatus) MarkRevisionsFailed(message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkFalse(GitRepositoryConditionRevisionsReady, ReasonRevisionFailed, message)
}

// MarkRevisionsDeploying: a Service's latest Revision is not ready yet.
func (gs *GitRepositoryStatus) MarkRevisionsDeploying(message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkUnknown(GitRepositoryConditionRevisionsReady, ReasonDeploying, message)
}

// Reasons of the Rollouts condition.
const (
	// ReasonRolloutInProgress: a Service's new Revision runs a step.
	ReasonRolloutInProgress = "RolloutInProgress"
	// ReasonRolloutFailed: a step failed its analysis; the Revision that
	// served before has all the traffic again.
	ReasonRolloutFailed = "RolloutFailed"
)

// MarkRolloutsSettled: no rollout runs and none was rolled back.
func (gs *GitRepositoryStatus) MarkRolloutsSettled() {
	GitRepositoryConditions.Manage(&gs.Status).MarkTrue(GitRepositoryConditionRollouts)
}

// MarkRolloutsProgressing: a rollout runs; message says where.
func (gs *GitRepositoryStatus) MarkRolloutsProgressing(message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkUnknown(GitRepositoryConditionRollouts, ReasonRolloutInProgress, message)
}

// MarkRolloutsFailed: a rollout was rolled back; message gives the numbers.
func (gs *GitRepositoryStatus) MarkRolloutsFailed(message string) {
	GitRepositoryConditions.Manage(&gs.Status).MarkFalse(GitRepositoryConditionRollouts, ReasonRolloutFailed, message)
}

// TrackedBranches are spec.branches, main when none; the first is the
// main branch. The GitRepository and PullRequest reconcilers both read
// it, so they agree on which pull requests get a preview.
func (gs *GitRepositorySpec) TrackedBranches() []string {
	if len(gs.Branches) == 0 {
		return []string{"main"}
	}
	return gs.Branches
}

// Preview is status.previews' entry for pull request number, nil when the
// last pass recorded none.
func (gs *GitRepositoryStatus) Preview(number int64) *PreviewStatus {
	for i := range gs.Previews {
		if gs.Previews[i].Number == number {
			return &gs.Previews[i]
		}
	}
	return nil
}

// Rollout is status.rollouts' entry for service on branch, nil when
// there is none.
func (gs *GitRepositoryStatus) Rollout(branch, service string) *RolloutStatus {
	for i := range gs.Rollouts {
		if gs.Rollouts[i].Branch == branch && gs.Rollouts[i].Service == service {
			return &gs.Rollouts[i]
		}
	}
	return nil
}

// Branch is status.branches' entry for branch, nil when there is none.
func (gs *GitRepositoryStatus) Branch(name string) *BranchStatus {
	for i := range gs.Branches {
		if gs.Branches[i].Name == name {
			return &gs.Branches[i]
		}
	}
	return nil
}
