package eventstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knitops/knit/gitsync/events"
)

// Names on the ConfigMaps a store writes.
const (
	// StateLabel marks them, so a store lists its own and nothing else.
	StateLabel = "knit.dev/event-sink-state"
	// SinkAnnotation names the sink (an EventSink's namespace/name),
	// which a label value could not always hold.
	SinkAnnotation = "knit.dev/event-sink"
	// StateKey is the data key holding the state as JSON.
	StateKey = "state.json"

	namePrefix = "knit-events-"
	fieldOwner = "knit-events"
)

// ConfigMaps is an events.Store in ConfigMaps of one namespace, each
// written whole by server-side apply, so a write needs no read first.
type ConfigMaps struct {
	// Client writes and deletes the ConfigMaps.
	Client client.Client
	// Reader reads them uncached (a manager's APIReader), so a new leader
	// reads what the last one wrote a moment ago, and the cache needs no
	// informer for them.
	Reader client.Reader
	// Namespace holds them: knit-system.
	Namespace string
}

var _ events.Store = (*ConfigMaps)(nil)

// Name is the ConfigMap that keeps sink's state: a digest of the sink's
// name, which may be longer than a ConfigMap's name may be.
func Name(sink string) string {
	sum := sha256.Sum256([]byte(sink))
	return namePrefix + hex.EncodeToString(sum[:10])
}

// Load implements events.Store.
func (s *ConfigMaps) Load(ctx context.Context, sink string) (events.State, error) {
	cm := &corev1.ConfigMap{}
	err := s.Reader.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: Name(sink)}, cm)
	if apierrors.IsNotFound(err) {
		return events.State{}, nil
	}
	if err != nil {
		return events.State{}, fmt.Errorf("reading saved events of sink %s: %w", sink, err)
	}
	var st events.State
	if raw := cm.Data[StateKey]; raw != "" {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			return events.State{}, fmt.Errorf("decoding saved events of sink %s in ConfigMap %s/%s: %w", sink, s.Namespace, cm.Name, err)
		}
	}
	return st, nil
}

// Save implements events.Store.
func (s *ConfigMaps) Save(ctx context.Context, sink string, st events.State) error {
	b, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encoding saved events of sink %s: %w", sink, err)
	}
	cm := corev1ac.ConfigMap(Name(sink), s.Namespace).
		WithLabels(map[string]string{StateLabel: "true", "app.kubernetes.io/managed-by": "knit"}).
		WithAnnotations(map[string]string{SinkAnnotation: sink}).
		WithData(map[string]string{StateKey: string(b)})
	if err := s.Client.Apply(ctx, cm, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("saving events of sink %s in ConfigMap %s/%s: %w", sink, s.Namespace, Name(sink), err)
	}
	return nil
}

// Delete implements events.Store.
func (s *ConfigMaps) Delete(ctx context.Context, sink string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: Name(sink)}}
	if err := s.Client.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting saved events of sink %s: %w", sink, err)
	}
	return nil
}

// Sinks implements events.Store.
func (s *ConfigMaps) Sinks(ctx context.Context) ([]string, error) {
	list := &corev1.ConfigMapList{}
	if err := s.Reader.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{StateLabel: "true"}); err != nil {
		return nil, fmt.Errorf("listing saved event sink states: %w", err)
	}
	sinks := make([]string, 0, len(list.Items))
	for _, cm := range list.Items {
		if sink := cm.Annotations[SinkAnnotation]; sink != "" {
			sinks = append(sinks, sink)
		}
	}
	return sinks, nil
}
