package forge

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type parseCase struct {
	name    string
	forge   Forge
	headers map[string]string
	body    string
	want    Event
	// wantErr, when set, is a substring of the error; wantStatus is the
	// status of an ignoredError (0: the error is not one).
	wantErr    string
	wantStatus int
}

func runParseCases(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			got, err := forges[tc.forge].parse(h, []byte(tc.body), "shop")
			ie, ignored := isIgnored(err)
			switch {
			case tc.wantStatus != 0:
				if !ignored || ie.status != tc.wantStatus {
					t.Fatalf("parse = %v, want ignored with status %d", err, tc.wantStatus)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse error %q does not mention %q", err, tc.wantErr)
				}
			case tc.wantErr != "":
				if err == nil || ignored || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parse = %v, want an error mentioning %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("parse: %v", err)
			default:
				if diff := cmp.Diff(tc.want, got, ignoreNewFields); diff != "" {
					t.Errorf("parse (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestParseGitHub(t *testing.T) {
	push, pr := testdata(t, "github-push.json"), testdata(t, "github-pull_request.json")
	ev := func(typ string) map[string]string { return map[string]string{"X-GitHub-Event": typ} }
	wantPR := Event{
		Kind: KindPullRequest, ForgeRepo: "knitops-demo/shop", Number: 42, Action: ActionSynchronize,
		HeadBranch: "pricing-v2", HeadSHA: "9f2b7c41d0a55e3a8c1f6e27b4d9a0c3e1f2b3c4", BaseBranch: "main",
		Title: "Try the new pricing engine", Body: "Canary at 10% please.", Author: "carol-c",
	}
	labeled := testdata(t, "github-pull_request-labeled.json")
	wantLabeled := wantPR
	wantLabeled.Action = ActionEdited
	wantLabeled.Body = "Reprices in the new engine.\r\n\r\nknit: canary 10,25,50 every 2m"
	wantLabeled.Labels = []string{"backend", "knit:canary"}
	edited := wantPR
	edited.Action = ActionEdited
	noBody := wantPR
	noBody.Body = ""
	merged := wantPR
	merged.Action, merged.Merged = ActionClosed, true
	fork := wantPR
	fork.Fork = true
	runParseCases(t, []parseCase{
		{name: "push", forge: ForgeGitHub, headers: ev("push"), body: push, want: Event{
			Kind: KindPush, ForgeRepo: "knitops-demo/shop", Ref: "refs/heads/main", Branch: "main",
			Before: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", After: "a10867b14bb761a232cd80139fbd4c0d33264240",
			Message: "Speed up checkout\n\nBatch the stock lookups.", Author: "alice-dev",
		}},
		{name: "push as form", forge: ForgeGitHub,
			headers: map[string]string{"X-GitHub-Event": "push", "Content-Type": "application/x-www-form-urlencoded"},
			body:    url.Values{"payload": {`{"ref":"refs/heads/dev","before":"` + zeroSHA + `","after":"abc","head_commit":{"id":"abc","message":"m","author":{"name":"Ann"}}}`}}.Encode(),
			want:    Event{Kind: KindPush, Ref: "refs/heads/dev", Branch: "dev", Before: zeroSHA, After: "abc", Message: "m", Author: "Ann"}},
		{name: "branch deleted", forge: ForgeGitHub, headers: ev("push"),
			body: `{"ref":"refs/heads/old","before":"abc","after":"` + zeroSHA + `","deleted":true,"head_commit":null,"pusher":{"name":"alice-dev"}}`,
			want: Event{Kind: KindPush, Ref: "refs/heads/old", Branch: "old", Before: "abc", After: zeroSHA, Deleted: true, Author: "alice-dev"}},
		{name: "tag push ignored", forge: ForgeGitHub, headers: ev("push"),
			body: `{"ref":"refs/tags/v1.0.0","after":"abc"}`, wantErr: "refs/tags/v1.0.0 is not a branch", wantStatus: http.StatusAccepted},
		{name: "pull request", forge: ForgeGitHub, headers: ev("pull_request"), body: pr, want: wantPR},
		{name: "pull request merged", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(strings.Replace(pr, `"action": "synchronize"`, `"action": "closed"`, 1), `"merged": false`, `"merged": true`, 1),
			want: merged},
		{name: "pull request from fork", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(pr, `"repo": {"id": 708401977, "name": "shop", "full_name": "knitops-demo/shop", "private": false}
    },
    "base"`, `"repo": {"id": 1, "name": "shop", "full_name": "mallory/shop", "private": false}
    },
    "base"`, 1),
			want: fork},
		{name: "pull request labeled", forge: ForgeGitHub, headers: ev("pull_request"), body: labeled, want: wantLabeled},
		{name: "pull request unlabeled", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(labeled, `"action": "labeled"`, `"action": "unlabeled"`, 1), want: wantLabeled},
		{name: "pull request description edited", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(pr, `"action": "synchronize"`, `"action": "edited"`, 1), want: edited},
		{name: "pull request without description", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(pr, `"body": "Canary at 10% please."`, `"body": null`, 1), want: noBody},
		{name: "closed pull request labeled ignored", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(labeled, `"state": "open"`, `"state": "closed"`, 1), wantErr: "closed pull request", wantStatus: http.StatusAccepted},
		{name: "pull request assigned ignored", forge: ForgeGitHub, headers: ev("pull_request"),
			body: strings.Replace(pr, `"action": "synchronize"`, `"action": "assigned"`, 1), wantErr: `action "assigned"`, wantStatus: http.StatusAccepted},
		{name: "ping", forge: ForgeGitHub, headers: ev("ping"), body: testdata(t, "github-ping.json"), wantErr: "pong", wantStatus: http.StatusOK},
		{name: "issues ignored", forge: ForgeGitHub, headers: ev("issues"), body: `{}`, wantErr: `"issues" is not handled`, wantStatus: http.StatusAccepted},
		{name: "missing event header", forge: ForgeGitHub, body: push, wantErr: "missing X-GitHub-Event"},
		{name: "malformed json", forge: ForgeGitHub, headers: ev("push"), body: `{"ref": "refs/heads/main",`, wantErr: "malformed github push payload: unexpected end of JSON input"},
		{name: "wrong type", forge: ForgeGitHub, headers: ev("pull_request"), body: `{"action":"opened","number":"seven"}`, wantErr: "malformed github pull_request payload"},
		{name: "push without ref", forge: ForgeGitHub, headers: ev("push"), body: `{"after":"abc"}`, wantErr: "missing ref"},
		{name: "push without after", forge: ForgeGitHub, headers: ev("push"), body: `{"ref":"refs/heads/main"}`, wantErr: "missing after"},
		{name: "pull request without pull_request", forge: ForgeGitHub, headers: ev("pull_request"), body: `{"action":"opened","number":3}`, wantErr: "missing pull_request"},
		{name: "pull request without head sha", forge: ForgeGitHub, headers: ev("pull_request"),
			body: `{"action":"opened","number":3,"pull_request":{"head":{"ref":"x"},"base":{"ref":"main"}}}`, wantErr: "missing head commit"},
	})
}

func TestParseGitLab(t *testing.T) {
	push, mr := testdata(t, "gitlab-push.json"), testdata(t, "gitlab-merge_request.json")
	ev := func(typ string) map[string]string { return map[string]string{"X-Gitlab-Event": typ} }
	wantMR := Event{
		Kind: KindPullRequest, ForgeRepo: "platform/payments", Number: 12, Action: ActionSynchronize,
		HeadBranch: "retry-auth", HeadSHA: "c0ffee1234567890abcdef1234567890abcdef12", BaseBranch: "main",
		Title: "Retry card authorisations", Body: "Adds a bounded retry.", Author: "frank",
	}
	labels := testdata(t, "gitlab-merge_request-labels.json")
	wantLabels := wantMR
	wantLabels.Action = ActionEdited
	wantLabels.Body = "Adds a bounded retry.\n\nknit: canary 10,50 every 5m"
	wantLabels.Labels = []string{"backend", "knit::canary"}
	titled := wantMR
	titled.Action = ActionEdited
	pushedWithLabels := wantLabels
	pushedWithLabels.Action = ActionSynchronize
	withAction := func(action string, oldrev bool) string {
		s := strings.Replace(mr, `"action": "update"`, `"action": "`+action+`"`, 1)
		if !oldrev {
			s = strings.Replace(s, `"oldrev": "4e3b5bd04fa1f3b2b0f6e2a44d9e8f1c2d3e4f50",`, "", 1)
		}
		return s
	}
	opened, merged, closed := wantMR, wantMR, wantMR
	opened.Action = ActionOpened
	merged.Action, merged.Merged = ActionClosed, true
	closed.Action = ActionClosed
	fork := wantMR
	fork.Fork = true
	runParseCases(t, []parseCase{
		{name: "push", forge: ForgeGitLab, headers: ev("Push Hook"), body: push, want: Event{
			Kind: KindPush, ForgeRepo: "platform/payments", Ref: "refs/heads/main", Branch: "main",
			Before: "95790bf891e76fee5e1747ab589903a6a1f80f22", After: "da1560886d4f094c3e6c9ef40349f7d38b5d27d7",
			Message: "Raise min-scale to 2\n", Author: "Dana Ops",
		}},
		{name: "branch deleted", forge: ForgeGitLab, headers: ev("Push Hook"),
			body: `{"object_kind":"push","ref":"refs/heads/old","before":"abc","after":"` + zeroSHA + `","checkout_sha":null,"user_username":"dana","commits":[]}`,
			want: Event{Kind: KindPush, Ref: "refs/heads/old", Branch: "old", Before: "abc", After: zeroSHA, Deleted: true, Author: "dana"}},
		{name: "merge request update with new commits", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: mr, want: wantMR},
		{name: "merge request opened", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: withAction("open", false), want: opened},
		{name: "merge request merged", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: withAction("merge", false), want: merged},
		{name: "merge request closed", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: withAction("close", false), want: closed},
		{name: "merge request from fork", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: strings.Replace(mr, `"source_project_id": 15`, `"source_project_id": 99`, 1), want: fork},
		{name: "merge request labels and description changed", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: labels, want: wantLabels},
		{name: "labels only under object_attributes", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: strings.Replace(labels, `"labels": [
    {"id": 198`, `"no_labels": [
    {"id": 198`, 1), want: wantLabels},
		{name: "merge request title changed", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: strings.Replace(withAction("update", false), `"changes": {`, `"changes": {"title": {"previous": "WIP", "current": "Retry card authorisations"},`, 1), want: titled},
		{name: "new commits and labels in one update", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: strings.Replace(labels, `"action": "update",`, `"action": "update", "oldrev": "4e3b5bd04fa1f3b2b0f6e2a44d9e8f1c2d3e4f50",`, 1), want: pushedWithLabels},
		{name: "update of only updated_at ignored", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: withAction("update", false), wantErr: `action "update"`, wantStatus: http.StatusAccepted},
		{name: "labels of a merged merge request ignored", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: strings.Replace(labels, `"state": "opened"`, `"state": "merged"`, 1), wantErr: "merged merge request", wantStatus: http.StatusAccepted},
		{name: "merge request approved ignored", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: withAction("approved", false), wantErr: `action "approved"`, wantStatus: http.StatusAccepted},
		{name: "tag push hook ignored", forge: ForgeGitLab, headers: ev("Tag Push Hook"), body: `{}`, wantErr: `"Tag Push Hook" is not handled`, wantStatus: http.StatusAccepted},
		{name: "note hook ignored", forge: ForgeGitLab, headers: ev("Note Hook"), body: `{}`, wantStatus: http.StatusAccepted, wantErr: "Note Hook"},
		{name: "missing event header", forge: ForgeGitLab, body: push, wantErr: "missing X-Gitlab-Event"},
		{name: "malformed json", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: `{"object_attributes": [}`, wantErr: "malformed gitlab merge request payload: invalid character"},
		{name: "merge request without attributes", forge: ForgeGitLab, headers: ev("Merge Request Hook"), body: `{"object_kind":"merge_request"}`, wantErr: "missing object_attributes"},
		{name: "merge request without source branch", forge: ForgeGitLab, headers: ev("Merge Request Hook"),
			body: strings.Replace(mr, `"source_branch": "retry-auth",`, "", 1), wantErr: "missing head branch"},
	})
}

func TestParseGitea(t *testing.T) {
	push, pr := testdata(t, "gitea-push.json"), testdata(t, "gitea-pull_request.json")
	ev := func(typ string) map[string]string { return map[string]string{"X-Gitea-Event": typ} }
	wantPR := Event{
		Kind: KindPullRequest, ForgeRepo: "team/blog", Number: 5, Action: ActionClosed, Merged: true,
		HeadBranch: "dark-theme", HeadSHA: "e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d5e", BaseBranch: "main",
		Title: "Dark theme", Author: "hank",
	}
	synced := wantPR
	synced.Action, synced.Merged = ActionSynchronize, false
	fork := wantPR
	fork.Fork = true
	labeled := testdata(t, "gitea-pull_request-label_updated.json")
	wantLabeled := wantPR
	wantLabeled.Action, wantLabeled.Merged = ActionEdited, false
	wantLabeled.Body = "Darker palette for the night owls.\n\nknit: canary 25,50 every 1m automerge"
	wantLabeled.Labels = []string{"knit:canary"}
	cleared := wantLabeled
	cleared.Labels = nil
	runParseCases(t, []parseCase{
		{name: "push", forge: ForgeGitea, headers: ev("push"), body: push, want: Event{
			Kind: KindPush, ForgeRepo: "team/blog", Ref: "refs/heads/main", Branch: "main",
			Before: "1b7d6b0e5f3a2c4d8e9f0a1b2c3d4e5f6a7b8c9d", After: "4f8e2a1c9b3d5e7f60a1b2c3d4e5f60718293a4b",
			Message: "Publish the spring post\n", Author: "gina",
		}},
		{name: "push from Forgejo", forge: ForgeGitea, headers: map[string]string{"X-Forgejo-Event": "push"}, body: push, want: Event{
			Kind: KindPush, ForgeRepo: "team/blog", Ref: "refs/heads/main", Branch: "main",
			Before: "1b7d6b0e5f3a2c4d8e9f0a1b2c3d4e5f6a7b8c9d", After: "4f8e2a1c9b3d5e7f60a1b2c3d4e5f60718293a4b",
			Message: "Publish the spring post\n", Author: "gina",
		}},
		{name: "pull request merged", forge: ForgeGitea, headers: ev("pull_request"), body: pr, want: wantPR},
		{name: "pull request synchronized", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(strings.Replace(pr, `"action": "closed"`, `"action": "synchronized"`, 1), `"merged": true`, `"merged": false`, 1),
			want: synced},
		{name: "merged flag only counts when closed", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(pr, `"action": "closed"`, `"action": "synchronized"`, 1), want: synced},
		{name: "pull request from fork", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(pr, `"repo_id": 31,
      "repo": {"id": 31, "name": "blog", "full_name": "team/blog"}
    },
    "merge_base"`, `"repo_id": 77,
      "repo": {"id": 77, "name": "blog", "full_name": "mallory/blog"}
    },
    "merge_base"`, 1),
			want: fork},
		{name: "label added", forge: ForgeGitea, headers: ev("pull_request"), body: labeled, want: wantLabeled},
		{name: "labels cleared", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(strings.Replace(labeled, `"action": "label_updated"`, `"action": "label_cleared"`, 1),
				`{"id": 4, "name": "knit:canary", "exclusive": false, "is_archived": false, "color": "fbca04", "description": "Roll out as a canary", "url": "https://gitea.example.com/api/v1/repos/team/blog/labels/4"}`, "", 1),
			want: cleared},
		{name: "description edited", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(labeled, `"action": "label_updated"`, `"action": "edited"`, 1), want: wantLabeled},
		{name: "label change of a closed pull request ignored", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(pr, `"action": "closed"`, `"action": "label_updated"`, 1), wantErr: "closed pull request", wantStatus: http.StatusAccepted},
		{name: "milestone change ignored", forge: ForgeGitea, headers: ev("pull_request"),
			body: strings.Replace(labeled, `"action": "label_updated"`, `"action": "milestoned"`, 1), wantErr: "milestoned", wantStatus: http.StatusAccepted},
		{name: "review approval ignored", forge: ForgeGitea, headers: ev("pull_request_approved"), body: pr, wantErr: "pull_request_approved", wantStatus: http.StatusAccepted},
		{name: "missing event header", forge: ForgeGitea, body: push, wantErr: "missing X-Gitea-Event"},
		{name: "malformed json", forge: ForgeGitea, headers: ev("push"), body: `not json`, wantErr: "malformed gitea push payload: invalid character 'o'"},
	})
}

func TestParseGeneric(t *testing.T) {
	runParseCases(t, []parseCase{
		{name: "push", forge: ForgeGeneric,
			body: `{"kind":"push","repo":"shop","branch":"main","sha":"abc123","before":"def456","author":"ci-bot","message":"Bump image"}`,
			want: Event{Kind: KindPush, Ref: "refs/heads/main", Branch: "main", Before: "def456", After: "abc123", Author: "ci-bot", Message: "Bump image"}},
		{name: "push without repo", forge: ForgeGeneric, body: `{"kind":"push","branch":"dev","sha":"abc"}`,
			want: Event{Kind: KindPush, Ref: "refs/heads/dev", Branch: "dev", After: "abc"}},
		{name: "branch deleted", forge: ForgeGeneric, body: `{"kind":"push","branch":"old","deleted":true}`,
			want: Event{Kind: KindPush, Ref: "refs/heads/old", Branch: "old", Deleted: true}},
		{name: "pull request", forge: ForgeGeneric,
			body: `{"kind":"pull_request","branch":"feature","sha":"abc","author":"ann","pr":{"number":7,"action":"opened","base":"main","title":"Faster"}}`,
			want: Event{Kind: KindPullRequest, Number: 7, Action: ActionOpened, HeadBranch: "feature", HeadSHA: "abc", BaseBranch: "main", Title: "Faster", Author: "ann"}},
		{name: "pull request merged", forge: ForgeGeneric,
			body: `{"kind":"pull_request","branch":"feature","sha":"abc","pr":{"number":7,"action":"closed","merged":true,"base":"main"}}`,
			want: Event{Kind: KindPullRequest, Number: 7, Action: ActionClosed, Merged: true, HeadBranch: "feature", HeadSHA: "abc", BaseBranch: "main"}},
		{name: "pull request labels and description", forge: ForgeGeneric,
			body: `{"kind":"pull_request","branch":"feature","sha":"abc","pr":{"number":7,"action":"edited","base":"main","body":"knit: canary 10,50","labels":["knit:canary","ui"]}}`,
			want: Event{Kind: KindPullRequest, Number: 7, Action: ActionEdited, HeadBranch: "feature", HeadSHA: "abc", BaseBranch: "main",
				Body: "knit: canary 10,50", Labels: []string{"knit:canary", "ui"}}},
		{name: "pull request empty labels", forge: ForgeGeneric,
			body: `{"kind":"pull_request","branch":"feature","sha":"abc","pr":{"number":7,"action":"synchronize","base":"main","labels":[]}}`,
			want: Event{Kind: KindPullRequest, Number: 7, Action: ActionSynchronize, HeadBranch: "feature", HeadSHA: "abc", BaseBranch: "main"}},
		{name: "other repo", forge: ForgeGeneric, body: `{"kind":"push","repo":"blog","branch":"main","sha":"abc"}`, wantErr: `repo "blog" does not match`},
		{name: "unknown kind", forge: ForgeGeneric, body: `{"kind":"tag","branch":"main"}`, wantErr: `kind "tag" is not push or pull_request`},
		{name: "unknown field", forge: ForgeGeneric, body: `{"kind":"push","branch":"main","sha":"a","ref":"x"}`, wantErr: `unknown field "ref"`},
		{name: "push without branch", forge: ForgeGeneric, body: `{"kind":"push","sha":"abc"}`, wantErr: "missing branch"},
		{name: "push without sha", forge: ForgeGeneric, body: `{"kind":"push","branch":"main"}`, wantErr: "missing after"},
		{name: "pull request without pr", forge: ForgeGeneric, body: `{"kind":"pull_request","branch":"f","sha":"a"}`, wantErr: "needs pr"},
		{name: "pull request bad action", forge: ForgeGeneric,
			body: `{"kind":"pull_request","branch":"f","sha":"a","pr":{"number":1,"action":"merged","base":"main"}}`, wantErr: `pr.action "merged"`},
		{name: "pull request without number", forge: ForgeGeneric,
			body: `{"kind":"pull_request","branch":"f","sha":"a","pr":{"action":"opened","base":"main"}}`, wantErr: "invalid number 0"},
		{name: "malformed", forge: ForgeGeneric, body: `{"kind":`, wantErr: "malformed generic payload"},
	})
}

// ignoreNewFields leaves HeadRepo and UpdatedAt to TestParseProvenance,
// so the table above stays about what each forge's action means.
var ignoreNewFields = cmpopts.IgnoreFields(Event{}, "HeadRepo", "UpdatedAt")
