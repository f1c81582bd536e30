// Package threadstest is the conformance suite of the threads.Store contract. Every backend
// runs it: the in-memory twin in unit tests, the Azure Table store against Azurite in
// integration tests.
package threadstest
