package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/knitops/knit/dataplane/queue/queuebench"
)

// shapeRun is one request shape as the request-path part measures it.
// GET runs at -concurrency for -duration, as the bench always did; the
// shapes beyond it run at -shape-concurrency for -shape-duration, which
// keeps the part within twice its GET-only time.
type shapeRun struct {
	shape       queuebench.Shape
	concurrency []int
	duration    time.Duration
}

func (o options) shapeRuns() []shapeRun {
	var out []shapeRun
	for _, sh := range o.shapes {
		if sh == queuebench.ShapeGet {
			out = append(out, shapeRun{sh, o.concurrency, o.duration})
		} else {
			out = append(out, shapeRun{sh, o.shapeConcurrency, o.shapeDuration})
		}
	}
	return out
}

// concurrencyOf is the concurrencies shape runs at (none if not run).
func (o options) concurrencyOf(shape queuebench.Shape) []int {
	for _, sr := range o.shapeRuns() {
		if sr.shape == shape {
			return sr.concurrency
		}
	}
	return nil
}

func shapeNames() []string {
	var out []string
	for _, sh := range queuebench.Shapes() {
		out = append(out, string(sh))
	}
	return out
}

// parseShapes reads -shapes, keeping queuebench's order.
func parseShapes(list string) ([]queuebench.Shape, error) {
	var want []queuebench.Shape
	for _, f := range strings.Split(list, ",") {
		sh, err := queuebench.ParseShape(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("-shapes: %w (have %s)", err, strings.Join(shapeNames(), ","))
		}
		want = append(want, sh)
	}
	return slices.DeleteFunc(queuebench.Shapes(), func(sh queuebench.Shape) bool { return !slices.Contains(want, sh) }), nil
}

// notCarried is why a path cannot carry a shape as the shape means it;
// the report shows the cell n/a with the reason. Every other path
// carries every shape.
var notCarried = map[string]map[queuebench.Shape]string{
	queuebench.ReverseProxy: {
		queuebench.ShapeH2C: "http.DefaultTransport speaks HTTP/1.1 to the app, so h2c does not reach it; the pooled bare proxy is the h2c floor",
	},
}

// carries reports whether pa carries shape; na holds what checkShapes
// found besides notCarried.
func carries(pa path, shape queuebench.Shape, na map[string]map[queuebench.Shape]string) bool {
	return whyNot(pa, shape, na) == ""
}

// whyNot is why pa does not carry shape, empty when it does.
func whyNot(pa path, shape queuebench.Shape, na map[string]map[queuebench.Shape]string) string {
	if why := notCarried[pa.name][shape]; why != "" {
		return why
	}
	return na[pa.name][shape]
}

// checkShapes sends one request of every shape down every path that
// should carry it. A path that fails is left out of that shape's cells
// and shown n/a with the error, rather than filling them with errors or
// stopping the bench; the returned map holds those.
func checkShapes(ctx context.Context, list []path, shapes []queuebench.Shape) (map[string]map[queuebench.Shape]string, error) {
	na := map[string]map[queuebench.Shape]string{}
	for _, sh := range shapes {
		for _, pa := range list {
			if !carries(pa, sh, nil) {
				continue
			}
			r, err := queuebench.Run(ctx, queuebench.LoadSpec{URL: pa.url, Host: pa.host, Shape: sh, Concurrency: 1, Duration: activatorTimeout, MaxRequests: 1})
			if err != nil {
				return nil, fmt.Errorf("%s, %s: %w", pa.label, sh.Label(), err)
			}
			if r.Errors > 0 {
				if na[pa.name] == nil {
					na[pa.name] = map[queuebench.Shape]string{}
				}
				na[pa.name][sh] = fmt.Sprintf("its one request failed the check before the measurement: %v", r.FirstErr)
			}
		}
	}
	return na, nil
}
