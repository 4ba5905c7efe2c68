package buildkit

import (
	"regexp"
	"strconv"
	"strings"
)

// BuildKit's plain progress (buildctl --progress=plain) is the one stable,
// documented text form of a build's log: every line of a vertex (a step)
// starts with "#<n> ", its first line names it, its output lines carry
// the seconds since it started, and it ends with DONE, CACHED or ERROR.
// Progress reads it line by line to tell which steps ran or hit the cache
// and, when the build fails, which step failed and what it printed last.

// StepState is where a step stands.
type StepState string

// The states a step ends in, and Running before.
const (
	StepRunning StepState = "running"
	StepDone    StepState = "done"
	StepCached  StepState = "cached"
	StepError   StepState = "error"
)

// keptLines is how many of a step's last output lines are kept: enough
// for a compiler's or a package manager's error, small enough for a
// condition.
const keptLines = 12

// Step is one vertex of the build.
type Step struct {
	ID    int
	Name  string // "[2/3] RUN pip install -r requirements.txt"
	State StepState
	// Duration is what DONE reported ("0.3s"); Error what ERROR did.
	Duration, Error string
	// Lines are the last output lines, without their timestamps.
	Lines []string
}

// Instruction reports whether s is one of the Dockerfile's own steps
// ("[2/3] RUN …", "[build 1/4] COPY …"), not BuildKit's bookkeeping.
func (s *Step) Instruction() bool { return instruction.MatchString(s.Name) }

var (
	vertexLine  = regexp.MustCompile(`^#(\d+) (.*)$`)
	outputLine  = regexp.MustCompile(`^\d+\.\d+ (.*)$`)
	instruction = regexp.MustCompile(`^\[[^\]]*\d+/\d+\] `)
)

// Progress accumulates a build's plain progress.
type Progress struct {
	steps map[int]*Step
	order []int
	// errorLine is the build's last "error: …" line (buildctl's summary).
	errorLine string
	// OnStep, if set, is called with each step as it ends.
	OnStep func(Step)
}

// Line reads one line of output.
func (p *Progress) Line(line string) {
	line = strings.TrimRight(line, "\r")
	if rest, ok := strings.CutPrefix(line, "error: "); ok {
		p.errorLine = rest
		return
	}
	m := vertexLine.FindStringSubmatch(line)
	if m == nil {
		return
	}
	id, err := strconv.Atoi(m[1])
	if err != nil {
		return
	}
	s := p.step(id)
	body := m[2]
	switch {
	case s.Name == "":
		s.Name = body
	case body == "CACHED":
		p.end(s, StepCached)
	case strings.HasPrefix(body, "DONE"):
		s.Duration = strings.TrimSpace(strings.TrimPrefix(body, "DONE"))
		p.end(s, StepDone)
	case strings.HasPrefix(body, "ERROR"):
		s.Error = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(body, "ERROR"), ":"))
		p.end(s, StepError)
	default:
		if o := outputLine.FindStringSubmatch(body); o != nil {
			body = o[1]
		}
		s.Lines = append(s.Lines, body)
		if len(s.Lines) > keptLines {
			s.Lines = s.Lines[len(s.Lines)-keptLines:]
		}
	}
}

func (p *Progress) step(id int) *Step {
	if p.steps == nil {
		p.steps = map[int]*Step{}
	}
	s, ok := p.steps[id]
	if !ok {
		s = &Step{ID: id, State: StepRunning}
		p.steps[id] = s
		p.order = append(p.order, id)
	}
	return s
}

func (p *Progress) end(s *Step, state StepState) {
	if s.State != StepRunning {
		return // BuildKit may repeat a vertex's end; report it once
	}
	s.State = state
	if p.OnStep != nil {
		p.OnStep(*s)
	}
}

// Steps are the steps seen, in the order they started.
func (p *Progress) Steps() []Step {
	out := make([]Step, 0, len(p.order))
	for _, id := range p.order {
		out = append(out, *p.steps[id])
	}
	return out
}

// Failure says why the build failed, in the words a user acts on: the
// failing step, its last output lines and BuildKit's summary. "" when no
// step failed and BuildKit said nothing.
func (p *Progress) Failure() string {
	var b strings.Builder
	for _, id := range p.order {
		s := p.steps[id]
		if s.State != StepError {
			continue
		}
		b.WriteString(s.Name)
		for _, l := range s.Lines {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
		break
	}
	if p.errorLine != "" {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.errorLine)
	}
	return b.String()
}
