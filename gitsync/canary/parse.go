package canary

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// What a rule expects, shared by the parser and Plan.Validate; the
// messages around them quote what the user wrote.
var (
	errShortInterval = fmt.Errorf("shorter than the %s minimum", formatDuration(MinInterval))
	errPoints        = errors.New("expected percentage points from 0 to 100, e.g. max-5xx 2")
	errRatio         = errors.New("expected a ratio of at least 1, e.g. max-p99 1.5x")
	errMinRequests   = errors.New("expected a whole number of requests of at least 1, e.g. min-requests 50")
)

const expectedWords = "expected steps (e.g. 10,25,50), every <interval>, automerge, max-5xx <points>, max-p99 <ratio>x or min-requests <n>"

// commaSpace lets "10, 25, 50" be one token.
var commaSpace = regexp.MustCompile(`\s*,\s*`)

// parseSpec reads the grammar in the package documentation into a Plan,
// starting from DefaultPlan.
func parseSpec(spec string) (Plan, error) {
	p := DefaultPlan()
	tokens := strings.Fields(commaSpace.ReplaceAllString(strings.ToLower(spec), ","))
	seen := map[string]bool{}
	once := func(word string) error {
		if seen[word] {
			return fmt.Errorf("%q given twice", word)
		}
		seen[word] = true
		return nil
	}
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		if tok[0] >= '0' && tok[0] <= '9' {
			if err := once("steps"); err != nil {
				return Plan{}, fmt.Errorf("steps %q: %w", tok, err)
			}
			steps, err := parseSteps(tok)
			if err != nil {
				return Plan{}, err
			}
			p.Steps = steps
			continue
		}
		var arg string
		switch tok {
		case "every", "max-5xx", "max-p99", "min-requests":
			if i+1 == len(tokens) {
				return Plan{}, fmt.Errorf("%q needs a value: %s", tok, example(tok))
			}
			i++
			arg = tokens[i]
		case "automerge":
		default:
			return Plan{}, fmt.Errorf("unexpected %q: %s", tok, expectedWords)
		}
		if err := once(tok); err != nil {
			return Plan{}, err
		}
		var err error
		switch tok {
		case "every":
			p.Interval, err = parseInterval(arg)
		case "automerge":
			// Parsed wherever it is written, so a plan reads back the same;
			// the pull-request controller honours it only from a maintainer's
			// knit/automerge label, never from text the author writes.
			p.AutoMerge = true
		case "max-5xx":
			p.Thresholds.Max5xxPoints, err = parsePoints(arg)
		case "max-p99":
			p.Thresholds.MaxP99Ratio, err = parseRatio(arg)
		case "min-requests":
			p.Thresholds.MinRequests, err = parseMinRequests(arg)
		}
		if err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

func example(word string) string {
	switch word {
	case "every":
		return "e.g. every 2m"
	case "max-5xx":
		return "e.g. max-5xx 2 (percentage points over stable)"
	case "max-p99":
		return "e.g. max-p99 1.5x (ratio to stable)"
	default:
		return "e.g. min-requests 50"
	}
}

func parseSteps(tok string) ([]int64, error) {
	parts := strings.Split(tok, ",")
	steps := make([]int64, 0, len(parts))
	for _, part := range parts {
		if part == "" {
			return nil, fmt.Errorf("steps %q: an empty step; expected percents separated by commas, e.g. 10,25,50", tok)
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(part, "%"), 10, 64)
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("steps %q: %q is not a percent from 1 to 100", tok, part)
		}
		steps = append(steps, n)
	}
	if err := validateSteps(steps); err != nil {
		return nil, fmt.Errorf("steps %q: %w", tok, err)
	}
	return steps, nil
}

// validateSteps checks what parseSteps cannot see one step at a time.
func validateSteps(steps []int64) error {
	if len(steps) == 0 {
		return errors.New("no steps; expected percents, e.g. 10,25,50")
	}
	if len(steps) > MaxSteps {
		return fmt.Errorf("%d steps, at most %d", len(steps), MaxSteps)
	}
	for i, s := range steps {
		if s < 1 || s > 100 {
			return fmt.Errorf("%d is not a percent from 1 to 100", s)
		}
		if i > 0 && s <= steps[i-1] {
			return errors.New("percents must increase, e.g. 10,25,50")
		}
	}
	return nil
}

func parseInterval(arg string) (time.Duration, error) {
	d, err := time.ParseDuration(arg)
	if err != nil {
		if _, numErr := strconv.ParseFloat(arg, 64); numErr == nil {
			return 0, fmt.Errorf("interval %q needs a unit, e.g. %sm", arg, arg)
		}
		return 0, fmt.Errorf("interval %q: expected a duration such as 30s, 2m or 1h", arg)
	}
	if d < MinInterval {
		return 0, fmt.Errorf("interval %q: %w", arg, errShortInterval)
	}
	return d, nil
}

func parsePoints(arg string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(arg, "%"), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 100 {
		return 0, fmt.Errorf("max-5xx %q: %w", arg, errPoints)
	}
	return f, nil
}

func parseRatio(arg string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(arg, "x"), 64)
	if err != nil || math.IsNaN(f) || f < 1 || f > 1000 {
		return 0, fmt.Errorf("max-p99 %q: %w", arg, errRatio)
	}
	return f, nil
}

func parseMinRequests(arg string) (int64, error) {
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("min-requests %q: %w", arg, errMinRequests)
	}
	return n, nil
}
