package forgeapi

import (
	"context"
	"testing"

	"github.com/knitops/knit/gitsync/forge"
)

// Answers shaped as GitLab's REST reference (commits, notes, merge
// requests) documents them.
const (
	gitlabStatusReply = `{"id":93,"sha":"` + sha + `","ref":"retry-auth","status":"pending","name":"knit/canary",
		"target_url":"https://pr-12.payments.example.com","description":"Step 1 of 3: 10%","created_at":"2025-03-04T09:30:00.000Z",
		"started_at":null,"finished_at":null,"allow_failure":false,"coverage":null,"pipeline_id":101,
		"author":{"id":9,"username":"knit-bot","name":"knit","state":"active","avatar_url":null,"web_url":"https://gitlab.example.com/knit-bot"}}`
	gitlabMergeReply = `{"id":155016530,"iid":12,"project_id":15,"title":"Retry card authorisations","state":"merged",
		"merged_at":"2025-03-04T10:02:00.000Z","source_branch":"retry-auth","target_branch":"main","sha":"` + sha + `",
		"merge_commit_sha":"77aa0c5e6d4b3a2910f8e7d6c5b4a39281706f5e","web_url":"https://gitlab.example.com/platform/team/payments/-/merge_requests/12"}`
)

func gitlabNoteJSON(id, body string, system bool) string {
	sys := "false"
	if system {
		sys = "true"
	}
	return `{"id":` + id + `,"type":null,"body":` + quote(body) + `,"attachment":null,
		"author":{"id":9,"username":"knit-bot","name":"knit","state":"active"},
		"created_at":"2025-03-04T09:30:00.000Z","updated_at":"2025-03-04T09:30:00.000Z","system":` + sys + `,
		"noteable_id":155016530,"noteable_type":"MergeRequest","project_id":15,"noteable_iid":12,
		"resolvable":false,"confidential":false,"internal":false}`
}

func TestGitLab(t *testing.T) {
	// Derived from the clone URL http://127.0.0.1:<port>/platform/team/payments.git:
	// the project id is its URL-escaped path.
	const project = "/api/v4/projects/platform%2Fteam%2Fpayments"
	const notes = project + "/merge_requests/12/notes"
	const listQuery = "sort=asc&order_by=created_at&per_page=100"
	list := exchange{method: "GET", path: notes, query: listQuery, status: 200}
	upsert := func(ctx context.Context, c Client) error { return c.UpsertComment(ctx, 12, marker, newBody) }
	status := func(s Status) func(context.Context, Client) error {
		return func(ctx context.Context, c Client) error { return c.SetStatus(ctx, sha, s) }
	}
	runAPICases(t, forge.ForgeGitLab, []apiCase{
		{name: "status pending", call: status(Status{Context: "knit/canary", State: StatePending, TargetURL: "https://pr-12.payments.example.com", Description: "Step 1 of 3: 10%"}),
			steps: []exchange{{method: "POST", path: project + "/statuses/" + sha,
				body: `{"state":"pending","name":"knit/canary","target_url":"https://pr-12.payments.example.com","description":"Step 1 of 3: 10%"}`, status: 201, reply: gitlabStatusReply}}},
		{name: "status success", call: status(Status{Context: "knit/preview", State: StateSuccess}),
			steps: []exchange{{method: "POST", path: project + "/statuses/" + sha, body: `{"state":"success","name":"knit/preview"}`, status: 201, reply: gitlabStatusReply}}},
		{name: "status failure is failed", call: status(Status{Context: "knit/canary", State: StateFailure, Description: "5xx 4.1% > 1.2%"}),
			steps: []exchange{{method: "POST", path: project + "/statuses/" + sha, body: `{"state":"failed","name":"knit/canary","description":"5xx 4.1% > 1.2%"}`, status: 201, reply: gitlabStatusReply}}},
		{name: "status error is failed", call: status(Status{Context: "knit/canary", State: StateError}),
			steps: []exchange{{method: "POST", path: project + "/statuses/" + sha, body: `{"state":"failed","name":"knit/canary"}`, status: 201, reply: gitlabStatusReply}}},
		{name: "pending over pending is not an error", call: status(Status{Context: "knit/canary", State: StatePending}),
			steps: []exchange{{method: "POST", path: project + "/statuses/" + sha, body: `{"state":"pending","name":"knit/canary"}`, status: 400,
				reply: `{"message":"Cannot transition status via :enqueue from :pending (Reason(s): Status cannot transition via \"enqueue\")"}`}}},
		{name: "other refusals are", call: status(Status{Context: "knit/canary", State: StateSuccess}),
			steps: []exchange{{method: "POST", path: project + "/statuses/" + sha, body: `{"state":"success","name":"knit/canary"}`, status: 400,
				reply: `{"message":{"name":["is too long (maximum is 255 characters)"]}}`}},
			wantErr: `HTTP 400: "{\"name\":[\"is too long (maximum is 255 characters)\"]}"`, wantStatus: 400},

		{name: "note created when none carries the marker", call: upsert, steps: []exchange{
			with(list, `[`+gitlabNoteJSON("301", "approved this merge request", true)+`,`+gitlabNoteJSON("302", "Nice", false)+`]`),
			{method: "POST", path: notes, body: `{"body":` + quote(storedBody) + `}`, status: 201, reply: gitlabNoteJSON("303", storedBody, false)},
		}},
		{name: "note with the marker edited", call: upsert, steps: []exchange{
			with(list, `[`+gitlabNoteJSON("302", "Nice", false)+`,`+gitlabNoteJSON("305", marker+"\nold", false)+`]`),
			{method: "PUT", path: notes + "/305", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: gitlabNoteJSON("305", storedBody, false)},
		}},
		{name: "system notes are never knit's", call: upsert, steps: []exchange{
			with(list, `[`+gitlabNoteJSON("301", marker+"\nchanged the description", true)+`]`),
			{method: "POST", path: notes, body: `{"body":` + quote(storedBody) + `}`, status: 201, reply: gitlabNoteJSON("303", storedBody, false)},
		}},
		{name: "marker on page 2 by Link", call: upsert, steps: []exchange{
			withHeader(with(list, `[`+gitlabNoteJSON("302", "Nice", false)+`]`), "Link",
				`<{{URL}}/api/v4/projects/platform%2Fteam%2Fpayments/merge_requests/12/notes?order_by=created_at&page=2&per_page=100&sort=asc>; rel="next", <{{URL}}/api/v4/projects/platform%2Fteam%2Fpayments/merge_requests/12/notes?order_by=created_at&page=1&per_page=100&sort=asc>; rel="first"`),
			{method: "GET", path: notes, query: listQuery + "&page=2", status: 200, reply: `[` + gitlabNoteJSON("305", marker+"\nold", false) + `]`},
			{method: "PUT", path: notes + "/305", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: gitlabNoteJSON("305", storedBody, false)},
		}},
		{name: "marker on page 2 by X-Next-Page", call: upsert, steps: []exchange{
			withHeader(withHeader(with(list, `[`+gitlabNoteJSON("302", "Nice", false)+`]`), "X-Next-Page", "2"), "X-Page", "1"),
			{method: "GET", path: notes, query: listQuery + "&page=2", status: 200, header: map[string]string{"X-Next-Page": "", "X-Page": "2"},
				reply: `[` + gitlabNoteJSON("305", marker+"\nold", false) + `]`},
			{method: "PUT", path: notes + "/305", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: gitlabNoteJSON("305", storedBody, false)},
		}},
		{name: "duplicate notes deleted", call: upsert, steps: []exchange{
			with(list, `[`+gitlabNoteJSON("305", marker+"\nold", false)+`,`+gitlabNoteJSON("306", marker+"\nolder", false)+`]`),
			{method: "PUT", path: notes + "/305", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: gitlabNoteJSON("305", storedBody, false)},
			{method: "DELETE", path: notes + "/306", status: 204},
		}},

		{name: "merge", call: func(ctx context.Context, c Client) error { return c.Merge(ctx, 12, sha) },
			steps: []exchange{{method: "PUT", path: project + "/merge_requests/12/merge", body: `{"sha":"` + sha + `"}`, status: 200, reply: gitlabMergeReply}}},
		{name: "merge refused", call: func(ctx context.Context, c Client) error { return c.Merge(ctx, 12, sha) },
			steps:   []exchange{{method: "PUT", path: project + "/merge_requests/12/merge", body: `{"sha":"` + sha + `"}`, status: 405, reply: `{"message":"405 Method Not Allowed"}`}},
			wantErr: `merge !12: gitlab API PUT /api/v4/projects/platform%2Fteam%2Fpayments/merge_requests/12/merge: HTTP 405: "405 Method Not Allowed"`, wantStatus: 405},
	})
}
