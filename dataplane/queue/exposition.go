package queue

import (
	"bufio"
	"compress/gzip"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// The queue-proxy writes its /metrics itself, in Prometheus' text format
// 0.0.4, rather than through client_golang: that library and the
// protobuf runtime it brings were a third of knit-queue's binary and of
// its resident memory, and a millisecond of its start, which every cold
// start waits for. The families, names, help texts, types and labels
// are what client_golang's registry served (a test compares the two);
// the protobuf encoding it could also negotiate is not offered, and
// Prometheus reads the text format instead.

// metricsRegistry is the set of metric families /metrics serves, in name
// order as client_golang's registry sorts them.
type metricsRegistry struct {
	// mu serializes scrapes and guards what add changes.
	mu       sync.Mutex
	families []metricFamily
	prepares []func()
	// errors counts failed scrapes by cause, as promhttp does.
	errors [2]atomic.Uint64 // encoding, gathering
}

// metricFamily is one # HELP / # TYPE block; write adds its samples.
type metricFamily struct {
	name, help, kind string
	write            func(w *expoWriter)
}

// textContentType is what promhttp answers a text scrape with.
const textContentType = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores"

func newMetricsRegistry() *metricsRegistry {
	r := &metricsRegistry{}
	r.add(metricFamily{
		name: "promhttp_metric_handler_errors_total", kind: "counter",
		help: "Total number of internal errors encountered by the promhttp metric handler.",
		write: func(w *expoWriter) {
			w.sample("promhttp_metric_handler_errors_total", `cause="encoding"`, "", "", float64(r.errors[0].Load()))
			w.sample("promhttp_metric_handler_errors_total", `cause="gathering"`, "", "", float64(r.errors[1].Load()))
		},
	})
	return r
}

// add registers families; a name registered twice is a programming error.
func (r *metricsRegistry) add(fs ...metricFamily) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range fs {
		i, found := slices.BinarySearchFunc(r.families, f.name, func(g metricFamily, name string) int { return strings.Compare(g.name, name) })
		if found {
			panic("queue: metric family " + f.name + " registered twice")
		}
		r.families = slices.Insert(r.families, i, f)
	}
}

// prepare adds f to what each scrape runs first, before any family
// writes (reading shared state once for several families).
func (r *metricsRegistry) prepare(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prepares = append(r.prepares, f)
}

// ServeHTTP writes every family, gzipped when the client accepts it.
func (r *metricsRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Content-Type", textContentType)
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	var out *bufio.Writer
	var gz *gzip.Writer
	if acceptsGzip(req.Header.Values("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		gz = gzip.NewWriter(w)
		out = bufio.NewWriter(gz)
	} else {
		out = bufio.NewWriter(w)
	}
	ew := &expoWriter{w: out}
	r.mu.Lock()
	for _, f := range r.prepares {
		f()
	}
	for _, f := range r.families {
		ew.family(f)
	}
	r.mu.Unlock()
	err := out.Flush()
	if gz != nil && err == nil {
		err = gz.Close()
	}
	if err != nil {
		r.errors[0].Add(1)
	}
}

// acceptsGzip reports whether Accept-Encoding allows gzip (with a
// non-zero quality).
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				continue
			}
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
					q, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
				}
			}
			return q > 0
		}
	}
	return false
}

// expoWriter writes the text format.
type expoWriter struct {
	w   *bufio.Writer
	buf []byte
	// pending is the family whose HELP and TYPE lines go out with its
	// first sample: a family with none (a /proc file that could not be
	// read) is left out, as client_golang leaves it out.
	pending *metricFamily
}

func (w *expoWriter) family(f metricFamily) {
	w.pending = &f
	f.write(w)
	w.pending = nil
}

func (w *expoWriter) header() {
	f := w.pending
	w.pending = nil
	w.w.WriteString("# HELP ")
	w.w.WriteString(f.name)
	w.w.WriteByte(' ')
	w.w.WriteString(escapeHelp(f.help))
	w.w.WriteString("\n# TYPE ")
	w.w.WriteString(f.name)
	w.w.WriteByte(' ')
	w.w.WriteString(f.kind)
	w.w.WriteByte('\n')
}

// sample writes one line: name{labels,extra="value"} v. labels are
// rendered and escaped already (labelPairs), in name order; extra (le or
// quantile) comes last, as client_golang writes it.
func (w *expoWriter) sample(name, labels, extraName, extraValue string, v float64) {
	if w.pending != nil {
		w.header()
	}
	w.w.WriteString(name)
	if labels != "" || extraName != "" {
		w.w.WriteByte('{')
		w.w.WriteString(labels)
		if extraName != "" {
			if labels != "" {
				w.w.WriteByte(',')
			}
			w.w.WriteString(extraName)
			w.w.WriteString(`="`)
			w.w.WriteString(extraValue)
			w.w.WriteByte('"')
		}
		w.w.WriteByte('}')
	}
	w.w.WriteByte(' ')
	w.buf = appendFloat(w.buf[:0], v)
	w.w.Write(w.buf)
	w.w.WriteByte('\n')
}

// appendFloat formats v as client_golang's text format does.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 1:
		return append(b, '1')
	case v == 0:
		return append(b, '0')
	case v == -1:
		return append(b, "-1"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// labelPairs renders labels for sample, sorted by name, skipping empty
// values (a constant label with no value is not a label).
func labelPairs(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k, v := range labels {
		if v != "" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(labelValueEscaper.Replace(labels[k]))
		b.WriteByte('"')
	}
	return b.String()
}

var (
	labelValueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper       = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeHelp(s string) string { return helpEscaper.Replace(s) }

// joinLabels joins rendered label lists.
func joinLabels(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "," + b
}
