package forgeapi

import (
	"context"
	"testing"

	"github.com/knitops/knit/gitsync/forge"
)

// Answers shaped as Gitea's swagger (CommitStatus, Comment) documents them.
const giteaStatusReply = `{"id":17,"status":"success","target_url":"https://pr-3.hello.example.com","description":"Preview ready",
	"url":"http://127.0.0.1:3000/api/v1/repos/ada/hello/statuses/` + sha + `","context":"knit/preview",
	"creator":{"id":2,"login":"knit","full_name":"","email":"knit@noreply.localhost","username":"knit"},
	"created_at":"2025-03-04T09:30:00Z","updated_at":"2025-03-04T09:30:00Z"}`

func giteaCommentJSON(id, body string) string {
	return `{"id":` + id + `,"html_url":"http://127.0.0.1:3000/ada/hello/pulls/3#issuecomment-` + id + `",
		"pull_request_url":"http://127.0.0.1:3000/ada/hello/pulls/3","issue_url":"",
		"user":{"id":2,"login":"knit","username":"knit"},"original_author":"","original_author_id":0,
		"body":` + quote(body) + `,"assets":[],"created_at":"2025-03-04T09:30:00Z","updated_at":"2025-03-04T09:30:00Z"}`
}

func TestGitea(t *testing.T) {
	// Derived from the clone URL http://127.0.0.1:<port>/ada/hello.git.
	const repo = "/api/v1/repos/ada/hello"
	list := exchange{method: "GET", path: repo + "/issues/3/comments", status: 200}
	upsert := func(ctx context.Context, c Client) error { return c.UpsertComment(ctx, 3, marker, newBody) }
	runAPICases(t, forge.ForgeGitea, []apiCase{
		{name: "status success", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, sha, Status{Context: "knit/preview", State: StateSuccess, TargetURL: "https://pr-3.hello.example.com", Description: "Preview ready"})
		}, steps: []exchange{{method: "POST", path: repo + "/statuses/" + sha,
			body: `{"state":"success","target_url":"https://pr-3.hello.example.com","description":"Preview ready","context":"knit/preview"}`, status: 201, reply: giteaStatusReply}}},
		{name: "status error kept as error", call: func(ctx context.Context, c Client) error {
			return c.SetStatus(ctx, sha, Status{Context: "knit/canary", State: StateError, Description: "no metrics"})
		}, steps: []exchange{{method: "POST", path: repo + "/statuses/" + sha,
			body: `{"state":"error","description":"no metrics","context":"knit/canary"}`, status: 201, reply: giteaStatusReply}}},

		{name: "comment created when none carries the marker", call: upsert, steps: []exchange{
			with(list, `[`+giteaCommentJSON("11", "Looks good")+`]`),
			{method: "POST", path: repo + "/issues/3/comments", body: `{"body":` + quote(storedBody) + `}`, status: 201, reply: giteaCommentJSON("12", storedBody)},
		}},
		{name: "comment with the marker edited", call: upsert, steps: []exchange{
			with(list, `[`+giteaCommentJSON("11", "Looks good")+`,`+giteaCommentJSON("12", marker+"\nold")+`]`),
			{method: "PATCH", path: repo + "/issues/comments/12", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: giteaCommentJSON("12", storedBody)},
		}},
		{name: "marker on page 2", call: upsert, steps: []exchange{
			// Gitea answers an issue's comments in one page today; its
			// paginated lists link the next page, which is followed.
			withHeader(with(list, `[`+giteaCommentJSON("11", "Looks good")+`]`), "Link",
				`<{{URL}}/api/v1/repos/ada/hello/issues/3/comments?limit=1&page=2>; rel="next",<{{URL}}/api/v1/repos/ada/hello/issues/3/comments?limit=1&page=2>; rel="last"`),
			{method: "GET", path: repo + "/issues/3/comments", query: "limit=1&page=2", status: 200, reply: `[` + giteaCommentJSON("12", marker+"\nold") + `]`},
			{method: "PATCH", path: repo + "/issues/comments/12", body: `{"body":` + quote(storedBody) + `}`, status: 200, reply: giteaCommentJSON("12", storedBody)},
		}},
		{name: "comment edit refused", call: upsert, steps: []exchange{
			with(list, `[`+giteaCommentJSON("12", marker+"\nold")+`]`),
			{method: "PATCH", path: repo + "/issues/comments/12", body: `{"body":` + quote(storedBody) + `}`, status: 403,
				reply: `{"message":"user should have permission to write to the target repository","url":"http://127.0.0.1:3000/api/swagger"}`},
		}, wantErr: `edit comment 12: gitea API PATCH /api/v1/repos/ada/hello/issues/comments/12: HTTP 403: "user should have permission`, wantStatus: 403},

		{name: "merge", call: func(ctx context.Context, c Client) error { return c.Merge(ctx, 3, sha) },
			steps: []exchange{{method: "POST", path: repo + "/pulls/3/merge", body: `{"Do":"merge","head_commit_id":"` + sha + `"}`, status: 200}}},
		{name: "merge refused", call: func(ctx context.Context, c Client) error { return c.Merge(ctx, 3, sha) },
			steps: []exchange{{method: "POST", path: repo + "/pulls/3/merge", body: `{"Do":"merge","head_commit_id":"` + sha + `"}`, status: 405,
				reply: `{"message":"Please try again later","url":"http://127.0.0.1:3000/api/swagger"}`}},
			wantErr: `HTTP 405: "Please try again later"`, wantStatus: 405},
	})
}
