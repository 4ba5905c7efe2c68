// Package forge receives push and pull-request webhooks from GitHub,
// GitLab, Gitea (and Forgejo) and a generic HMAC-signed sender, verifies
// them, and turns each into one [Event], the only shape the rest of gitsync
// sees.
//
// A [Receiver] serves one route per forge, the repository named as knit
// knows it (a GitRepository's name, or namespace/name) in the rest of the
// path:
//
//	POST /hooks/github/<repo>   X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>
//	POST /hooks/gitlab/<repo>   X-Gitlab-Token: <the secret itself>, or, when the secret
//	                            is a signing secret (whsec_<base64>): webhook-id,
//	                            webhook-timestamp, webhook-signature (Standard Webhooks)
//	POST /hooks/gitea/<repo>    X-Gitea-Signature: <hex HMAC-SHA256 of the body>
//	POST /hooks/generic/<repo>  X-Knit-Signature-256: sha256=<hex HMAC-SHA256 of the body>
//
// Every request passes the same steps, each with its own answer:
//
//	route      unknown forge or empty repo                    404
//	secret     Options.Secret says ErrRepoNotFound            404; other lookup error 500; empty secret 403
//	body       larger than Options.MaxBodyBytes               413
//	verify     missing or wrong signature/token, or a signed  401 (OnEvent not called)
//	           timestamp outside SignatureTolerance
//	parse      event type or action knit does not act on      202 "ignored: …" (GitHub ping: 200 "pong")
//	           (an edit of a closed pull request is one)
//	           malformed JSON or missing fields               400 naming the problem
//	repository the payload names another repository than the  403 (Options.RepoURL)
//	           GitRepository's URL
//	dedupe     body seen in the last DedupeSize deliveries    200 "duplicate delivery ignored"
//	           the same body still being handled              409
//	deliver    Options.OnEvent says ErrStale                  409 (a replay or late redelivery)
//	           Options.OnEvent returns another error          500 with the error
//
// Deliveries are deduplicated by a hash of the body, which the signature
// covers, not by the delivery id, which GitHub, Gitea and GitLab's token
// do not sign: a captured delivery replayed under a new or no id is the
// same delivery. A body counts as seen only once OnEvent succeeds, so a
// forge's redelivery of a failed webhook is processed again.
//
// # Replays
//
// What stops a replayed delivery depends on what the forge signs:
//
//	GitHub, Gitea, generic  HMAC of the body only: in-memory dedupe of the body; after a
//	                        restart, a pull-request event older than the one recorded is
//	                        refused by its updated_at (ErrStale); a push replay only asks
//	                        for a fetch of what the branch is now
//	GitLab, token           a static shared password: anyone who saw one delivery can
//	                        forge any event; use a signing secret
//	GitLab, signing secret  HMAC over id, timestamp and body: refused outside
//	                        SignatureTolerance, deduplicated inside it
//
// # Generic webhooks
//
// Any system that can compute an HMAC may POST this JSON to
// /hooks/generic/<repo>, signed in X-Knit-Signature-256 and, for
// deduplication, carrying a unique X-Knit-Delivery id:
//
//	{
//	  "kind":    "push",            // or "pull_request"
//	  "repo":    "shop",            // optional; when set it must equal <repo> in the path
//	  "branch":  "main",            // push: the branch pushed; pull_request: the head branch
//	  "sha":     "<40 hex>",        // push: new head commit; pull_request: head commit
//	  "before":  "<40 hex>",        // push: previous head (optional)
//	  "deleted": false,             // push: the branch was deleted (sha may then be empty)
//	  "author":  "alice",
//	  "message": "Speed up checkout", // push: head commit message
//	  "pr": {                       // pull_request only
//	    "number": 7,
//	    "action": "opened",         // opened | synchronize | reopened | closed | edited
//	    "merged": false,            // with action closed: merged rather than abandoned
//	    "base":   "main",
//	    "title":  "Speed up checkout",
//	    "body":   "knit: canary 10,25,50 every 2m", // optional: the description
//	    "labels": ["knit:canary"],  // optional: label names after the event
//	    "fork":   false             // optional: the head lives in another repository
//	  }
//	}
package forge
