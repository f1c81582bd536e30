package bloblock

import "testing"

// Test-only exports for the external test package (which can import locktest).

// FakeLeases is the in-memory lease storage of the unit tests.
type FakeLeases = fakeLeases

// NewFakeLeases returns empty fake lease storage.
var NewFakeLeases = newFakeLeases

// NewBlobLeaseOnFake returns a blob lease lock on fake storage, closed at cleanup.
func NewBlobLeaseOnFake(t *testing.T, f *FakeLeases) *BlobLeaseThreadLock {
	return newFakeLock(t, f, Options{})
}
