package funchosttest

import (
	"testing"
	"time"
)

// eventuallyTimeout is how long Eventually polls before it fails the test.
const eventuallyTimeout = 10 * time.Second

// Eventually polls cond every 10 ms until it holds, and fails the test with what when it
// still does not after 10 s: for what an app does after it answered (a run that
// goes on past its request, a thread released in the background).
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(eventuallyTimeout); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %v", what, eventuallyTimeout)
		}
	}
}
