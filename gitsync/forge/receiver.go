package forge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// forgeSpec is how one forge's webhooks are verified, identified and parsed.
type forgeSpec struct {
	// verify checks the delivery's signature (and, where the forge signs
	// one, its timestamp against now).
	verify func(h http.Header, body, secret []byte, now time.Time) error
	// delivery returns the forge's delivery id, empty when absent.
	delivery func(h http.Header) string
	// parse returns the event, an ignoredError, or an error naming what
	// is malformed. repo is the hook's <repo>.
	parse func(h http.Header, body []byte, repo string) (Event, error)
}

// forges are the routes a Receiver serves, by the path segment naming them.
var forges = map[Forge]forgeSpec{
	ForgeGitHub: {
		verify:   verifyGitHub,
		delivery: func(h http.Header) string { return h.Get(headerGitHubDelivery) },
		parse:    parseGitHub,
	},
	ForgeGitLab: {
		verify:   verifyGitLab,
		delivery: func(h http.Header) string { return headerOf(h, headerWebhookID, headerGitLabDelivery) },
		parse:    parseGitLab,
	},
	ForgeGitea: {
		verify:   verifyGitea,
		delivery: func(h http.Header) string { return headerOf(h, headersGiteaDelivery...) },
		parse:    parseGitea,
	},
	ForgeGeneric: {
		verify:   verifyGeneric,
		delivery: func(h http.Header) string { return h.Get(HeaderGenericDelivery) },
		parse:    parseGeneric,
	},
}

// Receiver is the http.Handler for forge webhooks; see the package
// documentation for its routes and answers. It is safe for concurrent use.
type Receiver struct {
	opts Options
	mux  *http.ServeMux
	seen *deliveries
}

// NewReceiver validates opts and returns a Receiver serving
// <PathPrefix><forge>/<repo>.
func NewReceiver(opts Options) (*Receiver, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := &Receiver{opts: opts, mux: http.NewServeMux(), seen: newDeliveries(opts.DedupeSize)}
	r.mux.HandleFunc("POST "+opts.PathPrefix+"{forge}/{repo...}", r.serveHook)
	return r, nil
}

// ServeHTTP routes a webhook to its forge; other paths answer 404 and
// other methods 405.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mux.ServeHTTP(w, req)
}

// decoySecret stands in for the secret of a repository that does not
// exist or has none: its deliveries are read and verified against it, and
// fail as a bad signature does, with the same answer, so that nobody
// learns from the answers which GitRepositories exist (the log says
// which). Nobody knows it, so nothing verifies; a delivery that did is
// refused all the same.
var decoySecret = func() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}()

// serveHook runs one webhook through the steps the package comment lists.
func (r *Receiver) serveHook(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	forge, repo := Forge(req.PathValue("forge")), req.PathValue("repo")
	spec, ok := forges[forge]
	if !ok {
		http.Error(w, fmt.Sprintf("unknown forge %q: use github, gitlab, gitea or generic", forge), http.StatusNotFound)
		return
	}
	if repo == "" || strings.HasSuffix(repo, "/") {
		http.Error(w, "missing repository in path", http.StatusNotFound)
		return
	}
	log := r.opts.Logger.With("forge", forge, "repo", repo)

	secret, err := r.opts.Secret(ctx, repo)
	known := err == nil && len(secret) > 0
	switch {
	case errors.Is(err, ErrRepoNotFound):
		log.Info("Rejecting webhook for unknown repository")
		secret = decoySecret
	case err != nil:
		log.Error("Looking up webhook secret failed", "err", err)
		http.Error(w, "looking up the repository's webhook secret failed", http.StatusInternalServerError)
		return
	case len(secret) == 0:
		log.Warn("Rejecting webhook: repository has no webhook secret")
		secret = decoySecret
	}

	body, err := r.readBody(w, req)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			log.Warn("Rejecting oversized webhook", "limit", r.opts.MaxBodyBytes)
			http.Error(w, fmt.Sprintf("body exceeds %d bytes", r.opts.MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, fmt.Sprintf("reading body: %v", err), http.StatusBadRequest)
		return
	}

	if err := spec.verify(req.Header, body, secret, r.opts.Now()); err != nil {
		log.Warn("Rejecting unverified webhook", "err", err)
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	if !known {
		http.Error(w, ErrBadSignature.Error(), http.StatusUnauthorized)
		return
	}

	id := spec.delivery(req.Header)
	log = log.With("delivery", id)
	ev, err := spec.parse(req.Header, body, repo)
	if ie, ok := isIgnored(err); ok {
		log.Debug("Ignoring webhook", "reason", ie.reason)
		reply(w, ie.status, ie.Error())
		return
	}
	if err != nil {
		log.Warn("Rejecting malformed webhook", "err", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ev.Forge, ev.Repo, ev.Delivery = forge, repo, id
	if err := r.checkRepository(ctx, ev); err != nil {
		log.Warn("Rejecting webhook for another repository", "forgeRepo", ev.ForgeRepo, "err", err)
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	r.deliver(ctx, w, log, dedupeKey(forge, repo, body), ev)
}

// dedupeKey names a delivery by what its signature covers, the body,
// rather than by its delivery id: GitHub, Gitea and GitLab's token mode
// do not sign the id, so a replay under a fresh or an empty id is the
// same delivery all the same. A forge's redelivery repeats the body too.
func dedupeKey(forge Forge, repo string, body []byte) string {
	sum := sha256.Sum256(body)
	return string(forge) + "\x00" + repo + "\x00" + hex.EncodeToString(sum[:])
}

// checkRepository refuses an event whose payload names a repository other
// than the one the hook's GitRepository tracks. Generic webhooks carry no
// forge repository: their optional repo field is checked by the parser.
func (r *Receiver) checkRepository(ctx context.Context, ev Event) error {
	if r.opts.RepoURL == nil || ev.Forge == ForgeGeneric {
		return nil
	}
	cloneURL, err := r.opts.RepoURL(ctx, ev.Repo)
	if err != nil {
		return fmt.Errorf("looking up the repository's URL: %w", err)
	}
	return MatchRepository(ev.ForgeRepo, cloneURL)
}

// deliver dedupes ev by key and hands it to OnEvent.
func (r *Receiver) deliver(ctx context.Context, w http.ResponseWriter, log *slog.Logger, key string, ev Event) {
	switch r.seen.reserve(key) {
	case deliveryDone:
		log.Info("Ignoring duplicate webhook delivery")
		reply(w, http.StatusOK, "duplicate delivery ignored")
		return
	case deliveryPending:
		http.Error(w, "this delivery is already being handled", http.StatusConflict)
		return
	}
	log.Info("Received webhook", "kind", ev.Kind, "branch", firstNonEmpty(ev.Branch, ev.HeadBranch), "number", ev.Number, "action", ev.Action)
	err := r.opts.OnEvent(ctx, ev)
	// A stale event is settled: a replay of it is as stale.
	r.seen.finish(key, err == nil || errors.Is(err, ErrStale))
	switch {
	case errors.Is(err, ErrStale):
		log.Warn("Refusing stale webhook: a replay or a late redelivery", "kind", ev.Kind, "err", err)
		http.Error(w, err.Error(), http.StatusConflict)
	case err != nil:
		log.Error("Handling webhook failed", "kind", ev.Kind, "err", err)
		http.Error(w, fmt.Sprintf("handling %s event: %v", ev.Kind, err), http.StatusInternalServerError)
	default:
		reply(w, http.StatusOK, fmt.Sprintf("ok: %s event delivered", ev.Kind))
	}
}

// statusOf is the answer to a refused event: 403 for another
// repository's, 500 when the lookup itself failed.
func statusOf(err error) int {
	if errors.Is(err, ErrRepoMismatch) {
		return http.StatusForbidden
	}
	if errors.Is(err, ErrRepoNotFound) {
		return http.StatusNotFound
	}
	return http.StatusInternalServerError
}

// readBody reads at most MaxBodyBytes; beyond that it fails with
// *http.MaxBytesError, and a declared Content-Length over the limit fails
// before reading anything.
func (r *Receiver) readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	limit := r.opts.MaxBodyBytes
	if req.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, limit))
	if err != nil {
		return nil, fmt.Errorf("reading webhook body: %w", err)
	}
	return body, nil
}

// reply writes a short plain-text answer.
func reply(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, msg+"\n")
}

// Compile-time check that Receiver is an http.Handler.
var _ http.Handler = (*Receiver)(nil)
