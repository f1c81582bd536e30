// Package azurebench holds the benchmarks of the durable engine on Azure Storage, run against
// Azurite by `make bench-azure`. Each benchmark measures the engine next to a peer in the
// same run (a raw aztables batch commit of the same shape, the same run earlier on, an idle
// worker), so docs/benchmarks.md can report ratios rather than machine-bound absolute numbers.
//
// It holds no product code: every file but this one is a test file tagged `integration`.
// It is not for correctness: the conformance suites and the fleet tests live beside the
// backends and the example app, and nothing here asserts a timing or a size.
package azurebench
