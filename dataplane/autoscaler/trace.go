package autoscaler

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// traceHeader is the first line every trace must have.
const traceHeader = "second,concurrency,rps"

// sample is one trace row: the revision's total in-flight requests and
// requests per second during one second.
type sample struct {
	second           int64
	concurrency, rps float64
}

// readTrace reads a whole trace before anything is simulated, so a bad line
// is reported (by line number) before any output is written. Rows must be
// one per second starting at 0; lines starting with # are comments.
func readTrace(r io.Reader) ([]sample, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("trace is empty: want the header %q", traceHeader)
	}
	if err != nil {
		return nil, traceReadError(err)
	}
	if got := strings.Join(trimAll(header), ","); got != traceHeader {
		line, _ := cr.FieldPos(0)
		return nil, fmt.Errorf("trace line %d: header %q, want %q", line, got, traceHeader)
	}
	var samples []sample
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, traceReadError(err)
		}
		line, _ := cr.FieldPos(0)
		s, err := parseSample(trimAll(rec), int64(len(samples)))
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		samples = append(samples, s)
	}
	if len(samples) == 0 {
		return nil, errors.New("trace has no rows after the header")
	}
	return samples, nil
}

func parseSample(rec []string, want int64) (sample, error) {
	if len(rec) != 3 {
		return sample{}, fmt.Errorf("want 3 fields (%s), got %d", traceHeader, len(rec))
	}
	second, err := strconv.ParseInt(rec[0], 10, 64)
	if err != nil {
		return sample{}, fmt.Errorf("second %q is not an integer", rec[0])
	}
	if second != want {
		return sample{}, fmt.Errorf("second %d out of sequence, want %d (one row per second from 0)", second, want)
	}
	s := sample{second: second}
	for i, dst := range []*float64{&s.concurrency, &s.rps} {
		v, err := strconv.ParseFloat(rec[i+1], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return sample{}, fmt.Errorf("%s %q is not a non-negative number", strings.Split(traceHeader, ",")[i+1], rec[i+1])
		}
		*dst = v
	}
	return s, nil
}

func traceReadError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("trace line %d: %w", pe.Line, pe.Err)
	}
	return fmt.Errorf("reading trace: %w", err)
}

func trimAll(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = strings.TrimSpace(f)
	}
	return out
}
