package plan

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	servingv1 "github.com/knitops/knit/api/serving/v1"
)

// PullRequestRevision is the Revision previewing pull request number: the
// template a Service has at the head commit (head.Branch, head.SHA),
// stamped as <base service>-pr<N>-<sha7> outside any Configuration, so
// the base branch's latest Revision does not move. baseService is the
// Service on the base branch whose traffic the preview joins.
func PullRequestRevision(head Commit, rendered *unstructured.Unstructured, baseService string, number int64) (*servingv1.Revision, error) {
	svc := &servingv1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, svc); err != nil {
		return nil, fmt.Errorf("%w: Service %s at %s: %w", ErrInvalid, rendered.GetName(), short(head.SHA), err)
	}
	tmpl := svc.Spec.Template
	rev := &servingv1.Revision{
		TypeMeta: metav1.TypeMeta{APIVersion: servingv1.GroupVersion.String(), Kind: "Revision"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      PullRequestRevisionName(baseService, number, head.SHA),
			Namespace: head.Namespace,
			Labels: with(tmpl.Labels,
				servingv1.ServiceLabelKey, baseService,
				RepositoryLabel, head.Repository, BranchLabel, head.Branch,
				PullRequestLabel, strconv.FormatInt(number, 10)),
			Annotations: with(tmpl.Annotations,
				CommitAnnotation, head.SHA, AuthorAnnotation, head.Author, MessageAnnotation, firstLine(head.Message)),
		},
		Spec: tmpl.Spec,
	}
	return rev, nil
}
