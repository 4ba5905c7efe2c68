package webhooks

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// knativeFieldError is one refusal as Knative's apis.FieldError words it: a
// message, the paths it applies to, and details on lines of their own.
// knit's validators collect Kubernetes' field.ErrorList (typed, with the
// value and the path); the response renders them as Knative's webhook
// does, so clients written against Knative (its conformance suite among
// them) find the text they look for, e.g.
//
//	invalid value: foo@bar.baz: spec.template.spec.serviceAccountName
//	a lowercase RFC 1123 subdomain must consist of …
type knativeFieldError struct {
	Message string
	Paths   []string
	Details string
}

// knativeError words one Kubernetes field error in Knative's vocabulary:
// Invalid and NotSupported are apis.ErrInvalidValue ("invalid value: v",
// the reason in details), Required is ErrMissingField ("missing
// field(s)"), Forbidden is ErrDisallowedFields ("must not set the
// field(s)") when it says so and ErrGeneric (its detail as the message)
// otherwise, as is every other type.
func knativeError(e *field.Error) knativeFieldError {
	fe := knativeFieldError{Paths: []string{e.Field}, Details: e.Detail}
	switch e.Type {
	case field.ErrorTypeInvalid, field.ErrorTypeNotSupported:
		fe.Message = fmt.Sprint("invalid value: ", e.BadValue)
	case field.ErrorTypeRequired:
		fe.Message = "missing field(s)"
	case field.ErrorTypeDuplicate:
		fe.Message = fmt.Sprint("duplicate value: ", e.BadValue)
	case field.ErrorTypeForbidden:
		const disallowed = "must not set the field(s)"
		switch {
		case e.Detail == disallowed:
			fe.Message, fe.Details = disallowed, ""
		case strings.HasPrefix(e.Detail, disallowed+": "):
			fe.Message, fe.Details = disallowed, strings.TrimPrefix(e.Detail, disallowed+": ")
		default:
			fe.Message, fe.Details = e.Detail, ""
		}
	default: // TooLong and the rest: ErrGeneric, the detail says it
		fe.Message, fe.Details = e.Detail, ""
		if fe.Message == "" {
			fe.Message = e.Type.String()
		}
	}
	return fe
}

// Error renders one error as Knative's FieldError.Error does: "message:
// path, path" and, when there are details, a line with them.
func (fe knativeFieldError) Error() string {
	s := fe.Message + ": " + strings.Join(fe.Paths, ", ")
	if fe.Details != "" {
		s += "\n" + fe.Details
	}
	return s
}

// knativeMessage renders a list as Knative renders errors combined with
// Also: those with the same message and details become one with their
// paths sorted and joined, ordered by message then details, one per line.
func knativeMessage(errs field.ErrorList) string {
	var merged []knativeFieldError
	for _, e := range errs {
		fe := knativeError(e)
		i := slices.IndexFunc(merged, func(m knativeFieldError) bool { return m.Message == fe.Message && m.Details == fe.Details })
		if i < 0 {
			merged = append(merged, fe)
			continue
		}
		if !slices.Contains(merged[i].Paths, fe.Paths[0]) {
			merged[i].Paths = append(merged[i].Paths, fe.Paths[0])
		}
	}
	lines := make([]string, len(merged))
	slices.SortFunc(merged, func(a, b knativeFieldError) int {
		if c := strings.Compare(a.Message, b.Message); c != 0 {
			return c
		}
		return strings.Compare(a.Details, b.Details)
	})
	for i := range merged {
		slices.Sort(merged[i].Paths)
		lines[i] = merged[i].Error()
	}
	return strings.Join(lines, "\n")
}
