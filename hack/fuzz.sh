#!/usr/bin/env bash
# Runs every FuzzXxx of the module for FUZZTIME (a duration or a count
# such as 1000x), one target at a time as go test requires.
#
# go test -fuzz links a test binary per call; a package with three
# targets would be linked three times. This links each package's
# instrumented test binary once (go test -c -fuzz, which builds with the
# same coverage instrumentation) and runs it per target, from the
# package's directory so testdata/fuzz is its seed corpus, with the cache
# directory go test itself uses for new inputs.
set -euo pipefail
fuzztime=${1:?usage: hack/fuzz.sh FUZZTIME}
root=$(pwd)
bins=$(mktemp -d)
trap 'rm -rf "$bins"' EXIT
cache=$(go env GOCACHE)/fuzz

go list -f '{{.Dir}} {{.ImportPath}}' ./... | while read -r dir pkg; do
	targets=$(sed -n -E 's/^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\).*/\1/p' "$dir"/*_test.go 2>/dev/null || true)
	[ -n "$targets" ] || continue
	bin=$bins/$(echo "$pkg" | tr / _).test
	# -fuzz makes go build the package under test with fuzzing's
	# coverage instrumentation; the pattern only has to match a target.
	go test -c -o "$bin" -fuzz "^$(echo "$targets" | head -1)\$" "./${dir#"$root"/}"
	for fn in $targets; do
		echo "fuzz ./${dir#"$root"/} $fn for $fuzztime"
		(cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^$fn\$" -test.fuzztime "$fuzztime" \
			-test.fuzzcachedir "$cache/$pkg")
	done
	rm -f "$bin"
done
