//go:build race

package exampleapp_test

// raceEnabled reports whether the tests run under the race detector, whose instrumented JSON
// work makes a test that moves hundreds of megabytes several times slower.
const raceEnabled = true
