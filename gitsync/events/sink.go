package events

import (
	"fmt"
	"net/url"
	"slices"
)

// Mode is the CloudEvents HTTP content mode a sink receives.
type Mode string

// Content modes; the values match an EventSink's spec.encoding.
const (
	// ModeBinary puts attributes in ce-* headers and the data in the body.
	ModeBinary Mode = "binary"
	// ModeStructured sends the whole event as application/cloudevents+json.
	ModeStructured Mode = "structured"
)

// Sink is where events go: typically one EventSink object.
type Sink struct {
	// Name identifies the sink across SetSinks calls and labels its
	// metrics, e.g. the EventSink's namespace/name. Empty means URL.
	Name string
	// URL events are POSTed to.
	URL string
	// Types the sink wants; empty means all.
	Types []string
	// Mode on the wire; empty means binary.
	Mode Mode
}

// key is the sink's identity.
func (s Sink) key() string {
	if s.Name != "" {
		return s.Name
	}
	return s.URL
}

// accepts reports whether the sink wants events of type typ.
func (s Sink) accepts(typ string) bool {
	return len(s.Types) == 0 || slices.Contains(s.Types, typ)
}

// Validate checks that s can be delivered to.
func (s Sink) Validate() error {
	u, err := url.Parse(s.URL)
	if err != nil {
		return fmt.Errorf("sink %q: %w", s.key(), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("sink %q: URL %q is not an absolute http(s) URL", s.key(), s.URL)
	}
	switch s.Mode {
	case "", ModeBinary, ModeStructured:
	default:
		return fmt.Errorf("sink %q: mode %q is not binary or structured", s.key(), s.Mode)
	}
	return nil
}

// withDefaults returns s with Mode filled in and Types copied, so the
// caller's slice can change without affecting the worker.
func (s Sink) withDefaults() Sink {
	if s.Mode == "" {
		s.Mode = ModeBinary
	}
	s.Types = slices.Clone(s.Types)
	return s
}
