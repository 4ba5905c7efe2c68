// Package stepper moves a stepped canary on: when a step's window is
// over, what its verdict does to the canary, and where each running
// step's window began. A pull request's canary and a push's rollout step
// the same way and differ only in what they are compared with and who
// writes their status, so the arithmetic lives here once.
package stepper
