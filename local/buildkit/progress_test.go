package buildkit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A failing RUN, as buildctl --progress=plain prints it.
const failedBuild = `#1 [internal] load build definition from Dockerfile
#1 transferring dockerfile: 130B done
#1 DONE 0.0s

#2 [internal] load metadata for docker.io/library/python:3.11-slim
#2 DONE 0.1s

#3 [1/3] FROM docker.io/library/python:3.11-slim@sha256:abc
#3 CACHED

#4 [2/3] COPY app.py /app/
#4 DONE 0.0s

#5 [3/3] RUN python3 -c 'import missing'
#5 0.112 Traceback (most recent call last):
#5 0.112   File "<string>", line 1, in <module>
#5 0.113 ModuleNotFoundError: No module named 'missing'
#5 ERROR: process "/bin/sh -c python3 -c 'import missing'" did not complete successfully: exit code: 1
------
 > [3/3] RUN python3 -c 'import missing':
0.112 Traceback (most recent call last):
------
Dockerfile:3
--------------------
   1 |     FROM python:3.11-slim
--------------------
error: failed to solve: process "/bin/sh -c python3 -c 'import missing'" did not complete successfully: exit code: 1
`

func TestProgressFailure(t *testing.T) {
	var ended []string
	p := &Progress{OnStep: func(s Step) { ended = append(ended, s.Name+" "+string(s.State)) }}
	for line := range strings.SplitSeq(failedBuild, "\n") {
		p.Line(line)
	}
	want := `[3/3] RUN python3 -c 'import missing'
  Traceback (most recent call last):
    File "<string>", line 1, in <module>
  ModuleNotFoundError: No module named 'missing'
failed to solve: process "/bin/sh -c python3 -c 'import missing'" did not complete successfully: exit code: 1`
	if diff := cmp.Diff(want, p.Failure()); diff != "" {
		t.Errorf("Failure (-want +got):\n%s", diff)
	}
	wantEnded := []string{
		"[internal] load build definition from Dockerfile done",
		"[internal] load metadata for docker.io/library/python:3.11-slim done",
		"[1/3] FROM docker.io/library/python:3.11-slim@sha256:abc cached",
		"[2/3] COPY app.py /app/ done",
		"[3/3] RUN python3 -c 'import missing' error",
	}
	if diff := cmp.Diff(wantEnded, ended); diff != "" {
		t.Errorf("steps ended (-want +got):\n%s", diff)
	}
	var instructions []int
	for _, s := range p.Steps() {
		if s.Instruction() {
			instructions = append(instructions, s.ID)
		}
	}
	if diff := cmp.Diff([]int{3, 4, 5}, instructions); diff != "" {
		t.Errorf("instruction steps (-want +got):\n%s", diff)
	}
}

func TestProgressKeepsTheLastLines(t *testing.T) {
	p := &Progress{}
	p.Line("#7 [build 2/4] RUN make")
	for i := range 100 {
		p.Line("#7 1.0" + strings.Repeat("0", 1) + " line " + string(rune('a'+i%26)))
	}
	p.Line("#7 ERROR: exit code: 2")
	s := p.Steps()[0]
	if len(s.Lines) != keptLines || s.State != StepError || s.Error != "exit code: 2" || !s.Instruction() {
		t.Errorf("step = %+v", s)
	}
}

func TestProgressWithoutFailure(t *testing.T) {
	p := &Progress{}
	for _, l := range []string{"#1 [1/1] FROM scratch", "#1 DONE 0.0s", "", "unrelated", "#x nonsense"} {
		p.Line(l)
	}
	if got := p.Failure(); got != "" {
		t.Errorf("Failure = %q, want none", got)
	}
}

// FuzzProgress: whatever a build prints (a user's RUN step controls its
// output), reading it never panics and keeps a bounded number of lines.
func FuzzProgress(f *testing.F) {
	f.Add(failedBuild)
	f.Add("#1 \n#1 ERROR\n#99999999999999999999 x\nerror: \n")
	f.Fuzz(func(t *testing.T, out string) {
		p := &Progress{}
		for line := range strings.SplitSeq(out, "\n") {
			p.Line(line)
		}
		for _, s := range p.Steps() {
			if len(s.Lines) > keptLines {
				t.Fatalf("step %d keeps %d lines", s.ID, len(s.Lines))
			}
		}
		_ = p.Failure()
	})
}
