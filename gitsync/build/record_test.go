package build

import (
	"fmt"
	"testing"

	knitv1alpha1 "github.com/knitops/knit/api/knit/v1alpha1"
)

func TestRecordKeepsTheNewest(t *testing.T) {
	var builds []knitv1alpha1.BuildStatus
	for i := range keptBuilds + 5 {
		builds = Record(builds, knitv1alpha1.BuildStatus{Key: fmt.Sprint(i), Phase: knitv1alpha1.BuildRunning})
	}
	if len(builds) != keptBuilds || builds[0].Key != fmt.Sprint(keptBuilds+4) {
		t.Fatalf("Record kept %d, newest %s; want %d, newest %d", len(builds), builds[0].Key, keptBuilds, keptBuilds+4)
	}
	builds = Record(builds, knitv1alpha1.BuildStatus{Key: fmt.Sprint(keptBuilds), Phase: knitv1alpha1.BuildSucceeded})
	if builds[4].Phase != knitv1alpha1.BuildSucceeded || len(builds) != keptBuilds {
		t.Errorf("Record of a known key moved it or grew the list: %+v", builds[:5])
	}
}
