package pullrequest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	duckv1 "github.com/knitops/knit/api/duck/v1"
	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

// Commit-status contexts knit sets on a pull request's head.
const (
	PreviewContext = "knit/preview"
	CanaryContext  = "knit/canary"
)

// commentMarker makes knit's one comment findable, to edit it in place.
const commentMarker = "<!-- knit:preview -->"

// Commit-status states, as forgeapi names them.
const (
	statePending = "pending"
	stateSuccess = "success"
	stateFailure = "failure"
)

// report is what the forge should show for a pull request's head.
type report struct {
	commit string
	// preview and canary are commit statuses; canary is empty without a
	// stepped canary.
	preview, canary status
	comment         string
}

type status struct {
	state, description, targetURL string
}

// key identifies a status' content, to tell whether it was already set.
func (s status) key() string {
	if s.state == "" {
		return ""
	}
	return s.state + " " + s.description
}

// desiredReport is what pr's forge should show for commit.
func desiredReport(pr *knitv1alpha1.PullRequest, commit string) report {
	r := report{commit: commit, preview: previewStatus(pr), canary: canaryStatus(pr)}
	r.comment = comment(pr, commit, r)
	return r
}

func previewStatus(pr *knitv1alpha1.PullRequest) status {
	ready := pr.Status.GetCondition(duckv1.ConditionReady)
	switch {
	case ready.IsTrue() && pr.Status.URL != "":
		// A head that only adds Services has no tagged Revision: its
		// preview is a Service of its own, at the URL.
		return status{state: stateSuccess, description: "Preview ready: " + cmp.Or(pr.Status.RevisionName, pr.Status.URL), targetURL: pr.Status.URL}
	case ready.IsFalse():
		return status{state: stateFailure, description: clip(ready.Message, 140)}
	default:
		return status{state: statePending, description: "Deploying the preview"}
	}
}

func canaryStatus(pr *knitv1alpha1.PullRequest) status {
	c := pr.Status.Canary
	if c == nil {
		return status{}
	}
	switch c.Phase {
	case knitv1alpha1.CanaryPromoted:
		return status{state: stateSuccess, description: fmt.Sprintf("All %d steps passed (%d%% of traffic)", len(c.Steps), c.Percent)}
	case knitv1alpha1.CanaryRolledBack:
		return status{state: stateFailure, description: clip("Rolled back: "+c.Message, 140)}
	case knitv1alpha1.CanaryInvalid:
		return status{state: stateFailure, description: clip("Canary plan: "+c.Message, 140)}
	default:
		return status{state: statePending, description: fmt.Sprintf("Step %d of %d: %d%% of traffic", c.Step, len(c.Steps), c.Percent)}
	}
}

// comment is knit's one comment on the pull request, rewritten whole on
// every change.
func comment(pr *knitv1alpha1.PullRequest, commit string, r report) string {
	var b strings.Builder
	b.WriteString(commentMarker + "\n")
	switch r.preview.state {
	case stateSuccess:
		fmt.Fprintf(&b, "**knit preview** of `%.7s` is ready: %s\n\n", commit, pr.Status.URL)
	case stateFailure:
		fmt.Fprintf(&b, "**knit preview** of `%.7s` failed: %s\n\n", commit, r.preview.description)
	default:
		fmt.Fprintf(&b, "**knit preview** of `%.7s` is deploying.\n\n", commit)
	}
	fmt.Fprintf(&b, "| | |\n|---|---|\n| Revision | `%s` |\n| Commit | `%s` |\n", orDash(pr.Status.RevisionName), orDash(commit))
	if pr.Status.BaseService != "" {
		fmt.Fprintf(&b, "| Service | `%s` |\n", pr.Status.BaseService)
	}
	if c := pr.Status.Canary; c != nil {
		fmt.Fprintf(&b, "| Canary | %s |\n", canaryLine(c))
		if c.Message != "" {
			fmt.Fprintf(&b, "| Last analysis | %s |\n", strings.ReplaceAll(c.Message, "|", "\\|"))
		}
	}
	return b.String()
}

func canaryLine(c *knitv1alpha1.CanaryStatus) string {
	steps := make([]string, len(c.Steps))
	for i, s := range c.Steps {
		steps[i] = fmt.Sprintf("%d%%", s)
	}
	line := fmt.Sprintf("%s, step %d of %d (%s every %s), %d%% of traffic now", c.Phase, c.Step, len(c.Steps),
		strings.Join(steps, " → "), c.Interval.Duration, c.Percent)
	if c.Verdict != "" {
		line += ", last verdict " + c.Verdict
	}
	return line
}

// digest stands for a comment body in status, which need not hold it.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// clip shortens s to n characters: forges cap a status' description.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
