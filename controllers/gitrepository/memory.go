package gitrepository

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
	gitsource "github.com/knitops/knit/gitsync/source"
)

// memory is what the reconciler remembers of each repository between
// passes, so that a pass can tell what changed since the last fetch and
// the last apply. It lives in the process, not in the status: a restart
// forgets it, and the first pass after one fetches and applies, which is
// the resync a restart should do anyway.
type memory struct {
	mu        sync.Mutex
	repos     map[types.NamespacedName]remembered
	triggered map[types.NamespacedName]bool
}

// remembered is one repository's last fetch and last apply.
type remembered struct {
	// fetched is what the last successful fetch found, at fetchedAt.
	fetched   gitsource.Fetched
	fetchedAt time.Time
	// asked maps each branch the last fetch asked for to the head commit
	// a pull request named for it then ("" for none), so that a pull
	// request on a new branch or announcing a new head fetches again.
	asked map[string]string
	// generation and requestedAt are the spec and the knit.dev/requested-at
	// annotation the last fetch answered.
	generation  int64
	requestedAt string
	// refetch: the last fetch failed, or was asked for and not done.
	refetch bool
	// tooLarge is why the last fetch was refused as too large
	// (gitsource.TooLargeError), "" when it was not; fetched is then the
	// fetch before.
	tooLarge string

	// applied is what the last successful render and apply left; nil
	// before the first. What it did for pull requests is not here but in
	// the status (status.previews), which a restart keeps.
	applied *applied

	// told is the knit/deploy status last set per branch, as the branch's
	// status records it: a pass that reads the repository from a cache
	// behind the last status write must not tell the forge again.
	told map[string]knitv1alpha1.DeployReport
}

func newMemory() *memory {
	return &memory{repos: map[types.NamespacedName]remembered{}, triggered: map[types.NamespacedName]bool{}}
}

func (m *memory) get(key types.NamespacedName) remembered {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.repos[key]
}

func (m *memory) put(key types.NamespacedName, r remembered) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.repos[key] = r
}

func (m *memory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.repos, key)
	delete(m.triggered, key)
}

// trigger records that key was asked to fetch now (a push to knit's Git
// server, a forge webhook in knit dev).
func (m *memory) trigger(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.triggered[key] = true
}

// takeTrigger reports and clears a trigger of key.
func (m *memory) takeTrigger(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.triggered[key]
	delete(m.triggered, key)
	return t
}

// remember records a successful fetch and what asked for it.
func (r *remembered) remember(repo *knitv1alpha1.GitRepository, fetched gitsource.Fetched, asked map[string]string, now time.Time) {
	r.fetched = fetched
	r.answered(repo, asked, now)
	r.tooLarge = ""
}

// refuse records a fetch refused as too large: it answered what asked for
// it (no retry until a push, a new spec or the interval), and the last
// fetched heads stay what the apply phase syncs.
func (r *remembered) refuse(repo *knitv1alpha1.GitRepository, asked map[string]string, now time.Time, why string) {
	r.answered(repo, asked, now)
	r.tooLarge = why
}

func (r *remembered) answered(repo *knitv1alpha1.GitRepository, asked map[string]string, now time.Time) {
	r.fetchedAt, r.asked = now, asked
	r.generation, r.requestedAt = repo.Generation, requestedAt(repo)
	r.refetch = false
}
