package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestLargestPrimeBelow(t *testing.T) {
	for n, want := range map[int]int{0: 0, 2: 0, 3: 2, 10: 7, 100: 97, 10000: 9973} {
		if got := largestPrimeBelow(n); got != want {
			t.Errorf("largestPrimeBelow(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestHandle(t *testing.T) {
	tests := []struct {
		query    string
		code     int
		contains string
	}{
		{"?prime=100", http.StatusOK, "is 97"},
		{"?bloat=2", http.StatusOK, "Allocated 2 MB"},
		{"?sleep=1", http.StatusOK, "Slept for 1 ms"},
		{"", http.StatusOK, "Nothing asked"},
		{"?prime=-1", http.StatusBadRequest, "want an integer"},
		{"?bloat=999999", http.StatusBadRequest, "want an integer from 0 to 1024"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		handle(rec, httptest.NewRequest(http.MethodGet, "/"+tt.query, nil))
		if rec.Code != tt.code || !strings.Contains(rec.Body.String(), tt.contains) {
			t.Errorf("%s: %d %q, want %d containing %q", tt.query, rec.Code, rec.Body.String(), tt.code, tt.contains)
		}
	}
}
