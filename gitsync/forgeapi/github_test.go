package forgeapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/knitops/knit/gitsync/forge"
)

// Answers shaped as GitHub's REST reference documents them (trimmed).
const (
	githubStatusReply = `{"url":"https://api.github.com/repos/knitops-demo/shop/statuses/` + sha + `","avatar_url":"https://github.com/images/error/hubot_happy.gif",
		"id":1,"node_id":"MDY6U3RhdHVzMQ==","state":"success","description":"Preview ready","target_url":"https://pr-42.shop.example.com",
		"context":"knit/preview","created_at":"2025-03-04T09:30:00Z","updated_at":"2025-03-04T09:30:00Z",
		"creator":{"login":"knit-bot","id":1,"type":"Bot","site_admin":false}}`
	githubMergeReply = `{"sha":"6dcb09b5b57875f334f61aebed695e2e4193db5e","merged":true,"message":"Pull Request successfully merged"}`
	githubUser       = `"user":{"login":"knit-bot","id":41898282,"type":"Bot","site_admin":false}`
)

// githubComment answers one issue comment the way GitHub lists it.
func githubCommentJSON(id, body string) string {
	return `{"id":` + id + `,"node_id":"MDEyOklzc3VlQ29tbWVudDE=","url":"https://api.github.com/repos/knitops-demo/shop/issues/comments/` + id + `",
		"html_url":"https://github.com/knitops-demo/shop/pull/42#issuecomment-` + id + `","body":` + quote(body) + `,` + githubUser + `,
		"created_at":"2025-03-04T09:30:00Z","updated_at":"2025-03-04T09:30:00Z","issue_url":"https://api.github.com/repos/knitops-demo/shop/issues/42",
		"author_association":"NONE"}`
}

const (
	marker     = "<!-- knit:preview -->"
	newBody    = "Preview of `9f2b7c4`: https://pr-42.shop.example.com (revision shop-00007)"
	storedBody = marker + "\n" + newBody
)

func TestGitHub(t *testing.T) {
	const repo = "/repos/knitops-demo/shop"
	list := exchange{method: "GET", path: repo + "/issues/42/comments", query: "per_page=100", status: 200}
	upsert := func(ctx context.Context, c Client) error { return c.UpsertComment(ctx, 42, marker, newBody) }
	runAPICases(t, forge.ForgeGitHub, []apiCase{
		{name: "status pending", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, sha, Status{Context: "knit/preview", State: StatePending, Description: "Building the preview"})
		}, steps: []exchange{{method: "POST", path: repo + "/statuses/" + sha,
			body: `{"state":"pending","description":"Building the preview","context":"knit/preview"}`, status: 201, reply: githubStatusReply}}},
		{name: "status success with target", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, sha, Status{Context: "knit/preview", State: StateSuccess, TargetURL: "https://pr-42.shop.example.com", Description: "Preview ready"})
		}, steps: []exchange{{method: "POST", path: repo + "/statuses/" + sha,
			body: `{"state":"success","target_url":"https://pr-42.shop.example.com","description":"Preview ready","context":"knit/preview"}`, status: 201, reply: githubStatusReply}}},
		{name: "status description cut to 140", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, sha, Status{Context: "knit/canary", State: StateFailure, Description: strings.Repeat("é", 200)})
		}, steps: []exchange{{method: "POST", path: repo + "/statuses/" + sha,
			body: `{"state":"failure","description":"` + strings.Repeat("é", 139) + `…","context":"knit/canary"}`, status: 201, reply: githubStatusReply}}},
		{name: "status rejected", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, sha, Status{Context: "knit/canary", State: StateError})
		}, steps: []exchange{{method: "POST", path: repo + "/statuses/" + sha, body: `{"state":"error","context":"knit/canary"}`, status: 422,
			reply: `{"message":"Validation Failed","errors":[{"resource":"Status","code":"custom","field":"context","message":"This SHA and context has reached the maximum number of statuses."}],"documentation_url":"https://docs.github.com/rest/commits/statuses#create-a-commit-status"}`}},
			wantErr: `HTTP 422: "Validation Failed: This SHA and context has reached the maximum number of statuses."`, wantStatus: 422},
		{name: "bad status is not sent", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, "", Status{Context: "knit/preview", State: "done"})
		}, wantErr: `empty commit sha` + "\n" + `status state "done" is not pending`},

		{name: "comment created when none carries the marker", call: upsert, steps: []exchange{
			with(list, `[`+githubCommentJSON("1", "LGTM")+`,`+githubCommentJSON("2", "> "+marker+"\nquoted")+`]`),
			{method: "POST", path: repo + "/issues/42/comments", body: `{"body":` + quote(storedBody) + `}`, status: 201, reply: githubCommentJSON("3", storedBody)},
		}},
		{name: "comment with the marker edited", call: upsert, steps: []exchange{
			with(list, `[`+githubCommentJSON("1", "LGTM")+`,`+githubCommentJSON("7", marker+"\nPreview of `3c1e3a0`")+`]`),
			{method: "PATCH", path: repo + "/issues/comments/7", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: githubCommentJSON("7", storedBody)},
		}},
		{name: "unchanged comment left alone", call: upsert, steps: []exchange{
			with(list, `[`+githubCommentJSON("7", strings.ReplaceAll(storedBody, "\n", "\r\n"))+`]`),
		}},
		{name: "marker on page 2", call: upsert, steps: []exchange{
			withHeader(with(list, `[`+githubCommentJSON("1", "LGTM")+`]`), "Link",
				`<{{URL}}/repositories/708401977/issues/42/comments?per_page=100&page=2>; rel="next", <{{URL}}/repositories/708401977/issues/42/comments?per_page=100&page=2>; rel="last"`),
			{method: "GET", path: "/repositories/708401977/issues/42/comments", query: "per_page=100&page=2", status: 200,
				header: map[string]string{"Link": `<{{URL}}/repositories/708401977/issues/42/comments?per_page=100&page=1>; rel="prev", <{{URL}}/repositories/708401977/issues/42/comments?per_page=100&page=1>; rel="first"`},
				reply:  `[` + githubCommentJSON("9", marker+"\nold") + `]`},
			{method: "PATCH", path: repo + "/issues/comments/9", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: githubCommentJSON("9", storedBody)},
		}},
		{name: "duplicates deleted", call: upsert, steps: []exchange{
			with(list, `[`+githubCommentJSON("7", storedBody)+`,`+githubCommentJSON("8", marker+"\nold")+`]`),
			{method: "DELETE", path: repo + "/issues/comments/8", status: 204},
		}},
		{name: "comment body starting with the marker kept as is", call: func(ctx context.Context, c Client) error {
			return c.UpsertComment(ctx, 42, marker, storedBody)
		}, steps: []exchange{
			with(list, `[]`),
			{method: "POST", path: repo + "/issues/42/comments", body: `{"body":` + quote(storedBody) + `}`, status: 201, reply: githubCommentJSON("3", storedBody)},
		}},
		{name: "marker must be an HTML comment", call: func(ctx context.Context, c Client) error {
			return c.UpsertComment(ctx, 42, "knit:preview", newBody)
		}, wantErr: "not a one-line HTML comment"},
		{name: "comment on a missing pull request", call: upsert, steps: []exchange{
			with(exchange{method: "GET", path: repo + "/issues/42/comments", query: "per_page=100", status: 404},
				`{"message":"Not Found","documentation_url":"https://docs.github.com/rest/issues/comments#list-issue-comments"}`),
		}, wantErr: `list comments: github API GET /repos/knitops-demo/shop/issues/42/comments: HTTP 404: "Not Found"`, wantStatus: 404},

		{name: "merge", call: func(ctx context.Context, c Client) error { return c.Merge(ctx, 42, sha) },
			steps: []exchange{{method: "PUT", path: repo + "/pulls/42/merge", body: `{"sha":"` + sha + `"}`, status: 200, reply: githubMergeReply}}},
		{name: "merge refused", call: func(ctx context.Context, c Client) error { return c.Merge(ctx, 42, sha) },
			steps: []exchange{{method: "PUT", path: repo + "/pulls/42/merge", body: `{"sha":"` + sha + `"}`, status: 405,
				reply: `{"message":"Pull Request is not mergeable","documentation_url":"https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"}`}},
			wantErr: `merge #42: github API PUT /repos/knitops-demo/shop/pulls/42/merge: HTTP 405: "Pull Request is not mergeable"`, wantStatus: 405},
	})
}

// with sets an exchange's answer body.
func with(x exchange, reply string) exchange {
	x.reply = reply
	return x
}

// withHeader adds an answer header to an exchange.
func withHeader(x exchange, k, v string) exchange {
	h := map[string]string{k: v}
	for hk, hv := range x.header {
		h[hk] = hv
	}
	x.header = h
	return x
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
