package announce

import "testing"

// TestPreviewSinksHearTheirPullRequestOnly: a preview copy of an
// EventSink never hears of production's objects, nor of another pull
// request's; production's sinks hear of everything, as before.
func TestPreviewSinksHearTheirPullRequestOnly(t *testing.T) {
	for _, tc := range []struct {
		sink, object string
		want         bool
	}{
		{"", "", true},
		{"", "3", true},
		{"3", "3", true},
		{"3", "", false},
		{"3", "4", false},
	} {
		if got := (scopedSink{pullRequest: tc.sink}).hears(tc.object); got != tc.want {
			t.Errorf("sink of pull request %q hears an object of %q: %v, want %v", tc.sink, tc.object, got, tc.want)
		}
	}
}
