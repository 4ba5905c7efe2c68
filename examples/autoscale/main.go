// Command autoscale is knit's load sample, like Knative's autoscale-go:
// each request can sleep, compute and allocate, so a load generator can
// make the autoscaler add and remove replicas.
//
//	curl 'http://autoscale.default.localhost:8080/?sleep=100&prime=10000&bloat=5'
//
// sleep is milliseconds to wait, prime computes the largest prime below N,
// bloat allocates N megabytes for the request's duration.
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"
)

// Limits keep one request from taking the machine down.
const (
	maxSleep = 5 * time.Minute
	maxPrime = 50_000_000
	maxBloat = 1024 // MB
)

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	http.HandleFunc("/", handle)
	log.Printf("autoscale listening on :%s", port)
	log.Fatal(http.ListenAndServe(":"+port, nil))
}

func handle(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sleep, err1 := knob(q.Get("sleep"), int(maxSleep/time.Millisecond))
	prime, err2 := knob(q.Get("prime"), maxPrime)
	bloat, err3 := knob(q.Get("bloat"), maxBloat)
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	var mem []byte
	if bloat > 0 {
		mem = make([]byte, bloat<<20)
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1 // touch every page so the memory is really used
		}
	}
	if sleep > 0 {
		time.Sleep(time.Duration(sleep) * time.Millisecond)
	}
	if prime > 0 {
		fmt.Fprintf(w, "The largest prime below %d is %d.\n", prime, largestPrimeBelow(prime))
	}
	if bloat > 0 {
		fmt.Fprintf(w, "Allocated %d MB.\n", len(mem)>>20)
	}
	if sleep > 0 {
		fmt.Fprintf(w, "Slept for %d ms.\n", sleep)
	}
	if prime == 0 && bloat == 0 && sleep == 0 {
		fmt.Fprintln(w, "Nothing asked: try ?sleep=100&prime=10000&bloat=5")
	}
}

// knob parses a non-negative integer query value no larger than limit.
func knob(v string, limit int) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > limit {
		return 0, fmt.Errorf("%q: want an integer from 0 to %d", v, limit)
	}
	return n, nil
}

// largestPrimeBelow sieves [2, n) and returns its largest prime, 0 if none.
func largestPrimeBelow(n int) int {
	if n <= 2 {
		return 0
	}
	composite := make([]bool, n)
	for i := 2; i*i < n; i++ {
		if !composite[i] {
			for j := i * i; j < n; j += i {
				composite[j] = true
			}
		}
	}
	for i := n - 1; i >= 2; i-- {
		if !composite[i] {
			return i
		}
	}
	return 0
}
