package runtime

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTail(t *testing.T) {
	var tl tail
	for i := range 25 {
		fmt.Fprintf(&tl, "line %d\n", i)
	}
	fmt.Fprint(&tl, "partial ")
	fmt.Fprint(&tl, "end")
	want := []string{"line 16", "line 17", "line 18", "line 19", "line 20", "line 21", "line 22", "line 23", "line 24", "partial end"}
	if diff := cmp.Diff(want, tl.Lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}

	tl.Reset()
	fmt.Fprintf(&tl, "%s\r\n", strings.Repeat("x", 10*tailLineBytes))
	if got := tl.Lines(); len(got) != 1 || len(got[0]) != tailLineBytes {
		t.Errorf("a long line kept %d lines of %d bytes; want one of %d", len(got), len(got[0]), tailLineBytes)
	}
}
