// Package locktest is the conformance suite for lock.ThreadLock implementations:
// RunThreadLockTests, with Shared for locks whose instances share no state.
//
// Every implementation runs the same suite: the in-process lock in plain `go test`, the blob
// lease lock against Azurite in `make test`. It checks behaviour visible through the
// interface only; implementation details (renewal, storage layout) have their own tests.
package locktest
