package config

import (
	"fmt"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/knitops/knit/dataplane/autoscaler"
)

// SystemNamespace holds knit's ConfigMaps, as knative-serving holds Knative's.
const SystemNamespace = "knit-system"

// Config is one consistent snapshot of every ConfigMap knit reads.
type Config struct {
	Domain     *Domain
	Network    *Network
	GC         *GC
	Deployment *Deployment
	Defaults   *Defaults
	// Autoscaler is config-autoscaler, parsed by the KPA's own rules.
	Autoscaler *autoscaler.Config
	// Features is config-features: the pod fields a Revision may set.
	Features *Features
}

// Parse builds a snapshot from ConfigMap data keyed by ConfigMap name; a
// missing map means all its defaults. localDomain is the domain used when
// config-domain names none.
func Parse(maps map[string]map[string]string, localDomain string) (*Config, error) {
	var c Config
	var err error
	if c.Domain, err = ParseDomain(maps[DomainConfigName], localDomain); err != nil {
		return nil, err
	}
	if c.Network, err = ParseNetwork(maps[NetworkConfigName]); err != nil {
		return nil, err
	}
	if c.GC, err = ParseGC(maps[GCConfigName]); err != nil {
		return nil, err
	}
	if c.Deployment, err = ParseDeployment(maps[DeploymentConfigName]); err != nil {
		return nil, err
	}
	if c.Defaults, err = ParseDefaults(maps[DefaultsConfigName]); err != nil {
		return nil, err
	}
	if c.Autoscaler, err = autoscaler.NewConfigFromMap(maps[AutoscalerConfigName]); err != nil {
		return nil, err
	}
	if c.Features, err = ParseFeatures(maps[FeaturesConfigName]); err != nil {
		return nil, err
	}
	return &c, nil
}

// Store hands reconcilers the latest good snapshot without locks. A bad
// edit to a ConfigMap is reported and ignored: the previous snapshot stays,
// so a typo never takes the platform down.
type Store struct {
	localDomain string
	current     atomic.Pointer[Config]
	maps        atomic.Pointer[map[string]map[string]string]

	mu          sync.Mutex
	subscribers []chan event.GenericEvent
}

// Changes returns a channel that receives an event after every accepted
// update, for controllers whose output depends on config (a Route's URL on
// config-domain). Events coalesce: a slow reader sees at least one.
func (s *Store) Changes() <-chan event.GenericEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan event.GenericEvent, 1)
	s.subscribers = append(s.subscribers, ch)
	return ch
}

func (s *Store) notify() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subscribers {
		select {
		case ch <- event.GenericEvent{Object: &corev1.ConfigMap{}}:
		default:
		}
	}
}

// NewStore starts with every default in place; it fails only when
// localDomain makes the default host template unusable.
func NewStore(localDomain string) (*Store, error) {
	s := &Store{localDomain: localDomain}
	c, err := Parse(nil, localDomain)
	if err != nil {
		return nil, fmt.Errorf("built-in config defaults: %w", err)
	}
	s.current.Store(c)
	empty := map[string]map[string]string{}
	s.maps.Store(&empty)
	return s, nil
}

// Load returns the current snapshot; callers must not modify it.
func (s *Store) Load() *Config {
	return s.current.Load()
}

// Update replaces one ConfigMap's data (nil data = deleted) and reparses.
// On error the previous snapshot stays in force.
func (s *Store) Update(name string, data map[string]string) error {
	old := *s.maps.Load()
	next := make(map[string]map[string]string, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	if data == nil {
		delete(next, name)
	} else {
		next[name] = data
	}
	c, err := Parse(next, s.localDomain)
	if err != nil {
		return err
	}
	s.maps.Store(&next)
	s.current.Store(c)
	s.notify()
	return nil
}
