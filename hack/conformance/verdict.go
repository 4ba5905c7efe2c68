package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// verdict is a run judged against its mode's documented exceptions.
type verdict struct {
	mode            string
	passed, skipped int
	excused         []result // failed, and a documented exception
	failed          []result // failed, and no exception covers it
	stale           []string // exceptions whose test passed: the documentation is wrong
}

// judge sorts the results of a mode's run. A subtest's failure fails its
// parents too; only the parent's exception (or the subtest's own)
// excuses it.
func judge(mode string, results []result) verdict {
	v := verdict{mode: mode}
	excused := exceptions[mode]
	for _, r := range results {
		switch r.outcome {
		case "PASS":
			v.passed++
			if _, ok := excused[r.test]; ok {
				v.stale = append(v.stale, r.test)
			}
		case "SKIP":
			v.skipped++
		case "FAIL":
			if exceptionFor(excused, r.test) != "" {
				v.excused = append(v.excused, r)
			} else {
				v.failed = append(v.failed, r)
			}
		}
	}
	return v
}

// exceptionFor is the reason that excuses a test's failure: its own, or
// one of the tests it is a subtest of.
func exceptionFor(excused map[string]string, test string) string {
	for name := test; ; {
		if why, ok := excused[name]; ok {
			return why
		}
		i := strings.LastIndex(name, "/")
		if i < 0 {
			return ""
		}
		name = name[:i]
	}
}

func (v verdict) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance (%s): %d passed, %d skipped, %d failed as documented, %d failed\n",
		v.mode, v.passed, v.skipped, len(v.excused), len(v.failed))
	for _, r := range v.failed {
		fmt.Fprintf(&b, "  FAIL %s %s\n", r.suite, r.test)
	}
	for _, name := range slices.Sorted(slices.Values(v.stale)) {
		fmt.Fprintf(&b, "  %s passes: it is no longer an exception of %s (exceptions.go)\n", name, v.mode)
	}
	return b.String()
}

func (v verdict) err() error {
	if len(v.failed) > 0 {
		return fmt.Errorf("%d conformance tests failed in %s", len(v.failed), v.mode)
	}
	if len(v.stale) > 0 {
		return errors.New("documented exceptions pass: remove them from exceptions.go")
	}
	return nil
}
