// Package procmem reads the memory of a process for the benchmarks that report it: its
// resident set from /proc (Linux) and its live heap from the Go runtime's GC trace
// (GODEBUG=gctrace=1).
//
// Not for: production monitoring (no caching, no error detail), or platforms without /proc.
package procmem
