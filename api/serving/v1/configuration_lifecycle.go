package v1

import (
	"fmt"

	duckv1 "github.com/knitops/knit/api/duck/v1"
)

// The Configuration's transitions: its Ready follows the latest Revision
// it created, or says why it could not create one.

// InitializeConditions shows Ready as Unknown until the first pass.
func (cs *ConfigurationStatus) InitializeConditions() {
	ConfigurationConditions.Manage(&cs.Status).InitializeConditions()
}

// MarkRevisionNameTaken: the template names a Revision that is not the
// one this generation would stamp; message says what to change.
func (cs *ConfigurationStatus) MarkRevisionNameTaken(message string) {
	ConfigurationConditions.Manage(&cs.Status).MarkFalse(duckv1.ConditionReady, ReasonRevisionNameTaken, message)
}

// MarkRevisionCreationFailed: the API server refused the Revision; reason
// and message are its answer, so the Service shows why instead of waiting.
func (cs *ConfigurationStatus) MarkRevisionCreationFailed(reason, message string) {
	ConfigurationConditions.Manage(&cs.Status).MarkFalse(duckv1.ConditionReady, reason, message)
}

// MarkLatestCreatedReady: the latest created Revision is Ready.
func (cs *ConfigurationStatus) MarkLatestCreatedReady() {
	ConfigurationConditions.Manage(&cs.Status).MarkTrue(duckv1.ConditionReady)
}

// MarkLatestCreatedFailed: the latest created Revision, name, failed with
// message; the latest ready one keeps serving.
func (cs *ConfigurationStatus) MarkLatestCreatedFailed(name, message string) {
	ConfigurationConditions.Manage(&cs.Status).MarkFalse(duckv1.ConditionReady, ReasonRevisionFailed,
		fmt.Sprintf("Revision %q failed with message: %s", name, message))
}

// MarkLatestCreatedDeploying: the latest created Revision, name, is not
// ready yet.
func (cs *ConfigurationStatus) MarkLatestCreatedDeploying(name string) {
	ConfigurationConditions.Manage(&cs.Status).MarkUnknown(duckv1.ConditionReady, ReasonDeploying,
		fmt.Sprintf("waiting for Revision %q to become ready", name))
}
