package events

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNewEvent(t *testing.T) {
	at := time.Date(2025, 3, 4, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	o := Occurrence{
		Type:     TypeRevisionFailed,
		Resource: Resource{Kind: "Revision", Namespace: "shop", Name: "checkout-a10867b"},
		Time:     at,
		Data: Data{
			Repo: "shop", Branch: "main", Commit: "a10867b14bb761a232cd80139fbd4c0d33264240",
			Author: "alice-dev", Message: "Speed up checkout", Revision: "checkout-a10867b",
			Failure: &Failure{Reason: "ReadinessProbeFailed", Message: "GET /healthz answered 500"},
		},
	}
	e, err := NewEvent(o)
	if err != nil {
		t.Fatal(err)
	}
	if e.Type() != TypeRevisionFailed || e.Source() != "/knit/shop/revision" || e.Subject() != "shop/checkout-a10867b" {
		t.Errorf("type/source/subject = %q %q %q", e.Type(), e.Source(), e.Subject())
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(e.ID()) {
		t.Errorf("id %q is not 32 hex digits", e.ID())
	}
	if !e.Time().Equal(at) || e.Time().Location() != time.UTC {
		t.Errorf("time = %v, want %v in UTC", e.Time(), at)
	}
	if e.DataContentType() != "application/json" {
		t.Errorf("datacontenttype = %q", e.DataContentType())
	}
	var got Data
	if err := json.Unmarshal(e.Data(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o.Data, got); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	wantExt := map[string]any{ExtensionRepo: "shop", ExtensionBranch: "main", ExtensionCommit: "a10867b14bb761a232cd80139fbd4c0d33264240"}
	if diff := cmp.Diff(wantExt, e.Extensions()); diff != "" {
		t.Errorf("extensions (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(e.Data()), `"failure":{"reason":"ReadinessProbeFailed"`) {
		t.Errorf("data %s does not carry the failure", e.Data())
	}
}

func TestNewEventIDs(t *testing.T) {
	base := Occurrence{
		Type:     TypeRevisionReady,
		Resource: Resource{Kind: "Revision", Namespace: "shop", Name: "checkout-a10867b"},
		Data:     Data{Commit: "a10867b", Revision: "checkout-a10867b", URL: "http://checkout.shop.127.0.0.1.sslip.io"},
	}
	id := func(mutate func(*Occurrence)) string {
		o := base
		mutate(&o)
		e, err := NewEvent(o)
		if err != nil {
			t.Fatal(err)
		}
		return e.ID()
	}
	first := id(func(*Occurrence) {})
	cases := []struct {
		name   string
		mutate func(*Occurrence)
		same   bool
	}{
		{"same occurrence later (a restart re-announces it)", func(o *Occurrence) { o.Time = time.Now().Add(time.Hour) }, true},
		{"author and message do not identify the occurrence", func(o *Occurrence) { o.Data.Author, o.Data.Message = "x", "y" }, true},
		{"other commit", func(o *Occurrence) { o.Data.Commit = "b0b0b0b" }, false},
		{"other type", func(o *Occurrence) { o.Type = TypeRevisionFailed }, false},
		{"other namespace", func(o *Occurrence) { o.Resource.Namespace = "blog" }, false},
		{"other kind", func(o *Occurrence) { o.Resource.Kind = "Route" }, false},
		{"failure reason", func(o *Occurrence) { o.Data.Failure = &Failure{Reason: "Timeout"} }, false},
		{"explicit key", func(o *Occurrence) { o.Key = "uid-1/generation-3" }, false},
	}
	for _, tc := range cases {
		if got := id(tc.mutate); (got == first) != tc.same {
			t.Errorf("%s: id %s vs %s, want same=%v", tc.name, got, first, tc.same)
		}
	}
	keyed := func(o *Occurrence) { o.Key = "uid-1/generation-3" }
	if id(keyed) != id(keyed) {
		t.Error("the same key gave different ids")
	}
}

func TestNewEventInvalid(t *testing.T) {
	cases := []struct {
		name string
		o    Occurrence
		want string
	}{
		{"foreign type", Occurrence{Type: "com.example.thing", Resource: Resource{Kind: "Route", Namespace: "a", Name: "b"}}, "not a dev.knit.* type"},
		{"no type", Occurrence{Resource: Resource{Kind: "Route", Namespace: "a", Name: "b"}}, "not a dev.knit.* type"},
		{"no namespace", Occurrence{Type: TypeRouteUpdated, Resource: Resource{Kind: "Route", Name: "b"}}, "needs kind, namespace and name"},
		{"no name", Occurrence{Type: TypeSyncFailed, Resource: Resource{Kind: "GitRepository", Namespace: "a"}}, "needs kind, namespace and name"},
	}
	for _, tc := range cases {
		if _, err := NewEvent(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewEvent = %v, want error containing %q", tc.name, err, tc.want)
		}
	}
}
