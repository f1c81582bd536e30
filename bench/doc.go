// Package bench measures funcgraph's durable engine side by side with
// github.com/microsoft/durabletask-go v0.6.0 on the same workload: a 3-step chain of trivial
// nodes, each visit one "execute node" step and one "resolve route" step (the way funcgraph
// runs a graph).
//
// Both engines run in-process on their embedded backends (durabletask-go on in-memory SQLite,
// funcgraph on its memory backend) with the same worker concurrency, are warmed up first, and
// are timed the same way: every run is scheduled, then each run's status is polled at a short
// fixed interval until it is finished (never durabletask-go's WaitForOrchestrationCompletion,
// whose back-off reaches seconds). A step is one node visit, so a chain run has 3 steps.
//
// The package lives in its own Go module so that the product's go.mod never gains the
// benchmark-only dependency. `make bench` runs cmd/benchcompare, which prints both figures and
// their ratio. It is a measuring tool, not a library.
package bench
