package events

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
)

// Event types knit emits.
const (
	// TypeRevisionReady: a commit's Revision serves traffic-ready replicas.
	TypeRevisionReady = "dev.knit.revision.ready"
	// TypeRevisionFailed: a commit's Revision will not become ready (bad
	// YAML, admission rejection, failing readiness); the previous revision
	// keeps its traffic.
	TypeRevisionFailed = "dev.knit.revision.failed"
	// TypeRouteUpdated: a Route's traffic split or URL changed.
	TypeRouteUpdated = "dev.knit.route.updated"
	// TypeSyncFailed: a GitRepository could not be fetched, rendered or applied.
	TypeSyncFailed = "dev.knit.sync.failed"
	// TypeCanaryFailed: a pull request's stepped canary failed its
	// analysis and its traffic went back to 0 %.
	TypeCanaryFailed = "dev.knit.canary.failed"
	// TypeRolloutFailed: a push's stepped rollout failed a step (or its
	// Revision failed) and the Revision that served before has all the
	// traffic again.
	TypeRolloutFailed = "dev.knit.rollout.failed"
)

// Types lists every event type knit emits, for validating sink filters.
var Types = []string{TypeRevisionReady, TypeRevisionFailed, TypeRouteUpdated, TypeSyncFailed, TypeCanaryFailed, TypeRolloutFailed}

// Extension attributes set when Data carries the value, so brokers and
// triggers can filter on them without reading the data.
const (
	ExtensionRepo   = "knitrepo"
	ExtensionBranch = "knitbranch"
	ExtensionCommit = "knitcommit"
)

// Data is the JSON payload of every knit event; fields that do not apply
// are omitted.
type Data struct {
	// Repo is the GitRepository the change came from.
	Repo string `json:"repo,omitempty"`
	// Branch the commit is on.
	Branch string `json:"branch,omitempty"`
	// Commit is the full SHA.
	Commit string `json:"commit,omitempty"`
	// Author of the commit.
	Author string `json:"author,omitempty"`
	// Message of the commit.
	Message string `json:"message,omitempty"`
	// Revision is the name of the Revision built from the commit.
	Revision string `json:"revision,omitempty"`
	// URL where the revision or route is reachable.
	URL string `json:"url,omitempty"`
	// Failure says what went wrong, for the *.failed types.
	Failure *Failure `json:"failure,omitempty"`
}

// Failure is the reason and human message of a failed condition.
type Failure struct {
	// Reason is a CamelCase word, as in a condition (ReadinessProbeFailed).
	Reason string `json:"reason"`
	// Message explains the failure to a person.
	Message string `json:"message,omitempty"`
}

// Resource names the object an event is about.
type Resource struct {
	// Kind such as Revision, Route, GitRepository.
	Kind string
	// Namespace and Name of the object.
	Namespace, Name string
}

// Occurrence is one thing that happened, to be announced as an event.
type Occurrence struct {
	// Type is one of the Type* constants.
	Type string
	// Resource the event is about.
	Resource Resource
	// Key tells occurrences of the same Type on the same Resource apart:
	// the same Key yields the same event id. Pass something that changes
	// with each occurrence and is stable across restarts, such as the
	// object's UID and generation, or a condition's lastTransitionTime.
	// Empty derives it from Data (commit, revision, URL, failure), which
	// suits revision events but would merge a route going A→B→A.
	Key string
	// Time of the occurrence; zero means now.
	Time time.Time
	// Data is the payload.
	Data Data
}

// Source returns the CloudEvents source for r: /knit/<namespace>/<kind>.
func (r Resource) Source() string {
	return "/knit/" + r.Namespace + "/" + strings.ToLower(r.Kind)
}

// Subject returns the CloudEvents subject for r: <namespace>/<name>.
func (r Resource) Subject() string {
	return r.Namespace + "/" + r.Name
}

// NewEvent builds the CloudEvent announcing o, with a stable id.
func NewEvent(o Occurrence) (cloudevents.Event, error) {
	var errs []error
	if !strings.HasPrefix(o.Type, "dev.knit.") {
		errs = append(errs, fmt.Errorf("type %q is not a dev.knit.* type", o.Type))
	}
	if o.Resource.Kind == "" || o.Resource.Namespace == "" || o.Resource.Name == "" {
		errs = append(errs, fmt.Errorf("resource %+v needs kind, namespace and name", o.Resource))
	}
	if err := errors.Join(errs...); err != nil {
		return cloudevents.Event{}, fmt.Errorf("building event: %w", err)
	}
	e := cloudevents.NewEvent()
	e.SetID(o.id())
	e.SetType(o.Type)
	e.SetSource(o.Resource.Source())
	e.SetSubject(o.Resource.Subject())
	t := o.Time
	if t.IsZero() {
		t = time.Now()
	}
	e.SetTime(t.UTC())
	for name, v := range map[string]string{ExtensionRepo: o.Data.Repo, ExtensionBranch: o.Data.Branch, ExtensionCommit: o.Data.Commit} {
		if v != "" {
			e.SetExtension(name, v)
		}
	}
	if err := e.SetData(cloudevents.ApplicationJSON, o.Data); err != nil {
		return cloudevents.Event{}, fmt.Errorf("building %s event for %s: %w", o.Type, o.Resource.Subject(), err)
	}
	if err := e.Validate(); err != nil {
		return cloudevents.Event{}, fmt.Errorf("building %s event for %s: %w", o.Type, o.Resource.Subject(), err)
	}
	return e, nil
}

// id hashes what identifies the occurrence into 32 hex digits.
func (o Occurrence) id() string {
	key := o.Key
	if key == "" {
		d := o.Data
		key = strings.Join([]string{d.Repo, d.Branch, d.Commit, d.Revision, d.URL}, "\x00")
		if d.Failure != nil {
			key += "\x00" + d.Failure.Reason + "\x00" + d.Failure.Message
		}
	}
	h := sha256.New()
	for _, part := range []string{o.Type, o.Resource.Kind, o.Resource.Namespace, o.Resource.Name, key} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
