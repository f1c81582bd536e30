// Package examples holds the example durable graphs of the example app. Three are the
// examples of the Python durable package, ported to Go with their Python handler names so that
// their graph hashes are equal (parity: docs/lineage.md): data_pipeline (sequential), content_classifier (conditional routing
// with fan-in) and support_agent (human in the loop, waiting for an "approval" event). The
// fourth, research_agent, is the showcase of agent-shaped graphs: parallel search branches
// with a per-node retry policy and emitted events, joined in order, then an approval with a
// deadline, an escalation and bounded revisions (docs/examples.md). The fifth, reply_writer,
// streams while it runs: its node writes its reply piece by piece to the run's live channel
// before it commits it. The example app registers them with All.
//
// It is not a library: the graphs exist to demonstrate and test the durable runtime.
package examples
