package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/knitops/knit/api/serving/queuesidecar"
)

// GC is config-gc: when non-active revisions are collected.
type GC struct {
	// RetainSinceCreateTime keeps a revision at least this long after creation.
	RetainSinceCreateTime time.Duration
	// RetainSinceLastActiveTime keeps a revision this long after it last had traffic.
	RetainSinceLastActiveTime time.Duration
	// MinNonActiveRevisions always kept, whatever their age.
	MinNonActiveRevisions int64
	// MaxNonActiveRevisions kept at most, whatever their age; -1 disables.
	MaxNonActiveRevisions int64
}

// ParseGC reads config-gc with Knative's defaults.
func ParseGC(data map[string]string) (*GC, error) {
	g := &GC{
		RetainSinceCreateTime:     48 * time.Hour,
		RetainSinceLastActiveTime: 15 * time.Hour,
		MinNonActiveRevisions:     20,
		MaxNonActiveRevisions:     1000,
	}
	p := parser{cm: GCConfigName, data: data}
	p.durationOrDisabled("retain-since-create-time", &g.RetainSinceCreateTime)
	p.durationOrDisabled("retain-since-last-active-time", &g.RetainSinceLastActiveTime)
	p.int64("min-non-active-revisions", &g.MinNonActiveRevisions, 0, 1<<31)
	p.int64OrDisabled("max-non-active-revisions", &g.MaxNonActiveRevisions)
	if p.err != nil {
		return nil, p.err
	}
	if g.MaxNonActiveRevisions >= 0 && g.MinNonActiveRevisions > g.MaxNonActiveRevisions {
		return nil, fmt.Errorf("%s: min-non-active-revisions=%d is greater than max-non-active-revisions=%d", GCConfigName, g.MinNonActiveRevisions, g.MaxNonActiveRevisions)
	}
	return g, nil
}

// Deployment is config-deployment: how Revisions become Deployments.
type Deployment struct {
	// ProgressDeadline is how long a Revision may take to become ready
	// before it is marked failed.
	ProgressDeadline time.Duration
	// QueueSidecarImage runs beside each app on a real cluster.
	QueueSidecarImage string
	// RegistriesSkippingTagResolving are the registries (host[:port]) whose
	// tags a Revision runs as written, unresolved: registries no controller
	// can reach, whose images are loaded into the nodes' runtime directly.
	RegistriesSkippingTagResolving []string
	// DigestResolutionTimeout bounds resolving one Revision's tags.
	DigestResolutionTimeout time.Duration
	// QueueSidecar is every queue-proxy's requests and limits
	// (queue-sidecar-cpu-request, …) unless its Revision sets its own.
	QueueSidecar queuesidecar.Settings
}

// SkipsTagResolving says whether images of registry run by tag.
func (d *Deployment) SkipsTagResolving(registry string) bool {
	return slices.Contains(d.RegistriesSkippingTagResolving, registry)
}

// defaultRegistriesSkippingTagResolving are Knative's (kind's, ko's and
// the convention for images side-loaded into a development cluster) and
// knit.local, the chart's default repository of its own images, which is
// no registry either.
var defaultRegistriesSkippingTagResolving = []string{"kind.local", "ko.local", "dev.local", "knit.local"}

// ParseDeployment reads config-deployment with Knative's defaults.
func ParseDeployment(data map[string]string) (*Deployment, error) {
	d := &Deployment{ProgressDeadline: 600 * time.Second, QueueSidecarImage: "ghcr.io/knitops/knit:latest",
		RegistriesSkippingTagResolving: slices.Clone(defaultRegistriesSkippingTagResolving), DigestResolutionTimeout: 10 * time.Second}
	p := parser{cm: DeploymentConfigName, data: data}
	p.durationOrDisabled("progress-deadline", &d.ProgressDeadline)
	p.string("queue-sidecar-image", &d.QueueSidecarImage)
	p.list("registries-skipping-tag-resolving", &d.RegistriesSkippingTagResolving)
	p.durationOrDisabled("digest-resolution-timeout", &d.DigestResolutionTimeout)
	q := &d.QueueSidecar
	p.quantity("queue-sidecar-cpu-request", &q.CPURequest)
	p.quantity("queue-sidecar-cpu-limit", &q.CPULimit)
	p.quantity("queue-sidecar-memory-request", &q.MemoryRequest)
	p.quantity("queue-sidecar-memory-limit", &q.MemoryLimit)
	p.quantity("queue-sidecar-ephemeral-storage-request", &q.EphemeralStorageRequest)
	p.quantity("queue-sidecar-ephemeral-storage-limit", &q.EphemeralStorageLimit)
	if p.err != nil {
		return nil, p.err
	}
	if d.ProgressDeadline <= 0 {
		return nil, fmt.Errorf("%s: progress-deadline must be a positive duration", DeploymentConfigName)
	}
	if d.DigestResolutionTimeout <= 0 {
		return nil, fmt.Errorf("%s: digest-resolution-timeout must be a positive duration", DeploymentConfigName)
	}
	return d, nil
}

// Defaults is config-defaults: values the admission webhook fills in and
// the limits it enforces.
type Defaults struct {
	RevisionTimeoutSeconds              int64
	MaxRevisionTimeoutSeconds           int64
	RevisionResponseStartTimeoutSeconds int64
	RevisionIdleTimeoutSeconds          int64
	ContainerConcurrency                int64
	ContainerConcurrencyMaxLimit        int64
}

// ParseDefaults reads config-defaults with Knative's defaults.
func ParseDefaults(data map[string]string) (*Defaults, error) {
	d := &Defaults{RevisionTimeoutSeconds: 300, MaxRevisionTimeoutSeconds: 600, ContainerConcurrencyMaxLimit: 1000}
	p := parser{cm: DefaultsConfigName, data: data}
	p.int64("revision-timeout-seconds", &d.RevisionTimeoutSeconds, 1, 1<<31)
	p.int64("max-revision-timeout-seconds", &d.MaxRevisionTimeoutSeconds, 1, 1<<31)
	p.int64("revision-response-start-timeout-seconds", &d.RevisionResponseStartTimeoutSeconds, 0, 1<<31)
	p.int64("revision-idle-timeout-seconds", &d.RevisionIdleTimeoutSeconds, 0, 1<<31)
	p.int64("container-concurrency", &d.ContainerConcurrency, 0, 1<<31)
	p.int64("container-concurrency-max-limit", &d.ContainerConcurrencyMaxLimit, 1, 1<<31)
	if p.err != nil {
		return nil, p.err
	}
	if d.RevisionTimeoutSeconds > d.MaxRevisionTimeoutSeconds {
		return nil, fmt.Errorf("%s: revision-timeout-seconds=%d is greater than max-revision-timeout-seconds=%d", DefaultsConfigName, d.RevisionTimeoutSeconds, d.MaxRevisionTimeoutSeconds)
	}
	if d.ContainerConcurrency > d.ContainerConcurrencyMaxLimit {
		return nil, fmt.Errorf("%s: container-concurrency=%d is greater than container-concurrency-max-limit=%d", DefaultsConfigName, d.ContainerConcurrency, d.ContainerConcurrencyMaxLimit)
	}
	return d, nil
}
