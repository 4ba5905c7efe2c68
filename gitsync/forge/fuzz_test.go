package forge

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzForges are the forges FuzzReceiver picks from by number, with the
// header naming their event type.
var fuzzForges = []struct {
	forge       Forge
	eventHeader string
}{
	{ForgeGitHub, headerGitHubEvent},
	{ForgeGitLab, headerGitLabEvent},
	{ForgeGitea, headersGiteaEvent[0]},
	{ForgeGeneric, "X-Knit-Event"}, // generic payloads carry their kind
}

// knownActions are the pull-request actions an Event may carry.
var knownActions = map[Action]bool{ActionOpened: true, ActionSynchronize: true, ActionReopened: true, ActionClosed: true, ActionEdited: true}

// FuzzReceiver posts any correctly signed body, with any event type and
// content type, to each forge's route. A forge's payload is attacker-shaped
// input once its secret leaks, and a verified but malformed one must be
// answered 400 or ignored (200/202), never panic or 500; an event that
// reaches OnEvent is well formed: a push names a branch and its new head
// (or deletes it), a pull request its number, action, head and base.
func FuzzReceiver(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range seeds {
		body, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		name := filepath.Base(path)
		for i, ff := range fuzzForges {
			if !strings.HasPrefix(name, string(ff.forge)+"-") {
				continue
			}
			typ := strings.TrimSuffix(strings.TrimPrefix(name, string(ff.forge)+"-"), ".json")
			typ, _, _ = strings.Cut(typ, "-")
			if ff.forge == ForgeGitLab {
				typ = map[string]string{"push": gitlabPushHook, "merge_request": gitlabMergeRequestHook}[typ]
			}
			f.Add(uint8(i), typ, "application/json", body)
		}
	}
	f.Add(uint8(0), "push", "application/x-www-form-urlencoded", []byte("payload=%7B%22ref%22%3A%22refs%2Fheads%2Fmain%22%2C%22after%22%3A%22abc%22%7D"))
	f.Add(uint8(0), "pull_request", "application/json", []byte(`{"action":"edited","number":1}`))
	f.Add(uint8(2), "pull_request", "application/json", []byte(`{"action":"label_updated","pull_request":null}`))
	f.Add(uint8(1), gitlabMergeRequestHook, "application/json", []byte(`{"object_attributes":{"action":"update","iid":3,"oldrev":"","source_branch":"f","target_branch":"main","last_commit":{"id":"abc"}},"changes":{"labels":null}}`))
	f.Add(uint8(3), "", "application/json", []byte(`{"kind":"push","branch":"main","sha":"abc","repo":"shop"}`))
	f.Add(uint8(3), "", "application/json", []byte(`{"kind":"pull_request","branch":"f","sha":"abc","pr":{"number":2,"action":"opened","base":"main"}}`))
	f.Add(uint8(3), "", "text/plain", []byte(`{"kind":"pull_request","branch":"f","sha":"abc","pr":{"number":-2}}`))

	secret := []byte("fuzz-secret")
	f.Fuzz(func(t *testing.T, which uint8, eventType, contentType string, body []byte) {
		ff := fuzzForges[int(which)%len(fuzzForges)]
		var got []Event
		r, err := NewReceiver(Options{
			Secret:  func(context.Context, string) ([]byte, error) { return secret, nil },
			OnEvent: func(_ context.Context, e Event) error { got = append(got, e); return nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, "/hooks/"+string(ff.forge)+"/shop", bytes.NewReader(body))
		for name, value := range map[string]string{ff.eventHeader: eventType, "Content-Type": contentType} {
			if value != "" && validHeaderValue(value) {
				req.Header.Set(name, value)
			}
		}
		sig := SignHMACSHA256(secret, body)
		switch ff.forge {
		case ForgeGitHub:
			req.Header.Set(headerGitHubSignature, sig)
		case ForgeGitLab:
			req.Header.Set(headerGitLabToken, string(secret))
		case ForgeGitea:
			req.Header.Set(headersGiteaSignature[0], strings.TrimPrefix(sig, "sha256="))
		case ForgeGeneric:
			req.Header.Set(HeaderGenericSignature, sig)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)

		switch rec.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest:
		case http.StatusRequestEntityTooLarge:
			if len(body) <= DefaultMaxBodyBytes {
				t.Fatalf("413 for a %d-byte body", len(body))
			}
		default:
			t.Fatalf("%s %q answered %d: %s", ff.forge, eventType, rec.Code, rec.Body)
		}
		for _, e := range got {
			if rec.Code != http.StatusOK {
				t.Fatalf("event delivered but answered %d", rec.Code)
			}
			checkEvent(t, ff.forge, e)
		}
	})
}

// checkEvent fails t unless e is what OnEvent may be given.
func checkEvent(t *testing.T, forge Forge, e Event) {
	t.Helper()
	if e.Forge != forge || e.Repo != "shop" {
		t.Fatalf("event %+v: forge and repo are the route's", e)
	}
	switch e.Kind {
	case KindPush:
		if e.Branch == "" || e.Ref != branchPrefix+e.Branch || (e.After == "" && !e.Deleted) {
			t.Fatalf("push %+v: want a branch, its ref and a new head unless deleted", e)
		}
	case KindPullRequest:
		if e.Number <= 0 || !knownActions[e.Action] || e.HeadBranch == "" || e.HeadSHA == "" || e.BaseBranch == "" {
			t.Fatalf("pull request %+v: want a number, a known action, head branch and commit, base branch", e)
		}
		if e.Merged && e.Action != ActionClosed {
			t.Fatalf("pull request %+v: merged but %s", e, e.Action)
		}
	default:
		t.Fatalf("event %+v: kind %q", e, e.Kind)
	}
}

// validHeaderValue is what net/http would send as a header value.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
