package main

import (
	"fmt"
	"regexp"
	"strings"
)

// kindPattern is spec.allowedKinds' pattern: Kind, or Kind.group.
var kindPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// kindList is a comma-separated list of kinds spelled as
// spec.allowedKinds spells them ("Service.serving.knative.dev,ConfigMap").
// A misspelt kind is an error at start-up rather than a kind that never
// matches.
type kindList struct{ kinds []string }

func (l *kindList) String() string { return strings.Join(l.kinds, ",") }

func (l *kindList) Set(v string) error {
	var kinds []string
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !kindPattern.MatchString(k) {
			return fmt.Errorf("%q is not a kind: want Kind or Kind.group, e.g. Deployment.apps", k)
		}
		kinds = append(kinds, k)
	}
	l.kinds = kinds
	return nil
}
