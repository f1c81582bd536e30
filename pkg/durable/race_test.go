//go:build race

package durable

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = true
