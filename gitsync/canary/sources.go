package canary

import (
	"errors"
	"fmt"
	"strings"
)

// Source is where the plan in force was asked for.
type Source string

const (
	SourceNone        Source = ""
	SourceDescription Source = "description"
	SourceLabel       Source = "label"
	SourceAnnotation  Source = "annotation"
)

// ParseDescription finds the first line of a PR description that starts
// with "knit: canary" (any case, leading spaces allowed) and parses the
// rest of it; other lines are prose and ignored. ok reports whether such a
// line exists: a malformed one is ok with an error, not skipped for a
// later line, so the user hears that what they wrote was not understood.
func ParseDescription(body string) (p Plan, ok bool, err error) {
	for line := range strings.Lines(body) {
		line = strings.TrimSpace(line) // forges send \r\n
		spec, found := cutPrefixFold(line, DescriptionPrefix)
		if !found {
			continue
		}
		p, err := parseSpec(spec)
		if err != nil {
			return Plan{}, true, fmt.Errorf("PR description line %q: %w", line, err)
		}
		return p, true, nil
	}
	return Plan{}, false, nil
}

// ParseLabels finds the canary label among a PR's labels: "knit/canary"
// alone asks for DefaultPlan, "knit/canary: <spec>" for that spec. Two
// different canary labels are an error rather than a guess, since forges
// do not keep labels in the order they were added.
func ParseLabels(labels []string) (p Plan, ok bool, err error) {
	var found string
	for _, l := range labels {
		l = strings.TrimSpace(l)
		if _, is := labelSpec(l); !is {
			continue
		}
		if ok && !strings.EqualFold(l, found) {
			return Plan{}, true, fmt.Errorf("labels %q and %q: more than one canary label; keep one", found, l)
		}
		found, ok = l, true
	}
	if !ok {
		return Plan{}, false, nil
	}
	spec, _ := labelSpec(found)
	if p, err = parseSpec(spec); err != nil {
		return Plan{}, true, fmt.Errorf("label %q: %w", found, err)
	}
	return p, true, nil
}

// labelSpec reports whether l is the canary label and what follows its
// colon.
func labelSpec(l string) (spec string, ok bool) {
	return cutPrefixFold(l, LabelName)
}

// ParseAnnotation parses the value of the knit.dev/canary annotation on
// the branch's Service, e.g. "10,25,50 every 2m". Unlike the label, the
// annotation is written in a manifest where a value is cheap, so an empty
// one is an error, not the defaults.
func ParseAnnotation(v string) (Plan, error) {
	if strings.TrimSpace(v) == "" {
		return Plan{}, fmt.Errorf("annotation %s is empty: expected steps and an interval, e.g. \"10,25,50 every 2m\"", AnnotationKey)
	}
	p, err := parseSpec(v)
	if err != nil {
		return Plan{}, fmt.Errorf("annotation %s %q: %w", AnnotationKey, v, err)
	}
	return p, nil
}

// Resolve picks the plan in force for a PR: the description line, else a
// label, else the annotation ("" meaning none). The nearer a request is to
// the PR, the more it says about this PR: the description and labels are
// written for it, the annotation travels with the branch's manifests. Only
// the winning source is parsed, and when it is malformed Resolve returns
// its error rather than falling back to a lower one, so a typo in the
// description is reported instead of silently running the annotation's
// plan. It returns SourceNone and no error when nothing asks for a canary.
func Resolve(description string, labels []string, annotation string) (Plan, Source, error) {
	if p, ok, err := ParseDescription(description); ok {
		return p, SourceDescription, err
	}
	if p, ok, err := ParseLabels(labels); ok {
		return p, SourceLabel, err
	}
	if annotation != "" {
		p, err := ParseAnnotation(annotation)
		return p, SourceAnnotation, err
	}
	return Plan{}, SourceNone, nil
}

// cutPrefixFold is strings.CutPrefix ignoring case, for a prefix that
// must end at a word boundary ("knit/canary" does not match
// "knit/canary-beta"), and it drops one colon after the prefix: both
// "knit/canary: 5,50" and "knit: canary: 5,50" are understood. Spaces in
// the prefix are optional, so "knit:canary" matches too.
func cutPrefixFold(s, prefix string) (rest string, ok bool) {
	for _, r := range prefix {
		if r == ' ' {
			s = strings.TrimLeft(s, " \t")
			continue
		}
		if s == "" {
			return "", false
		}
		c := s[0]
		if !strings.EqualFold(string(c), string(r)) {
			return "", false
		}
		s = s[1:]
	}
	if s != "" && s[0] != ' ' && s[0] != '\t' && s[0] != ':' {
		return "", false
	}
	return strings.TrimPrefix(strings.TrimLeft(s, " \t"), ":"), true
}

// ParseRollout parses a push's rollout plan, e.g. "10,50 every 1m", as
// the knit.dev/rollout annotation or a GitRepository's spec.rollout
// (where, for the error) writes it: the canary's grammar without
// automerge, which means nothing for a commit already on its branch.
func ParseRollout(where, v string) (Plan, error) {
	if strings.TrimSpace(v) == "" {
		return Plan{}, fmt.Errorf("%s is empty: expected steps and an interval, e.g. \"10,50 every 1m\"", where)
	}
	p, err := parseSpec(v)
	if err == nil && p.AutoMerge {
		err = errors.New("automerge is for pull requests; a push is already merged")
	}
	if err != nil {
		return Plan{}, fmt.Errorf("%s %q: %w", where, v, err)
	}
	return p, nil
}
