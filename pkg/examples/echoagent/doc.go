// Package echoagent is the echo_agent example graph: a chat "agent" that answers every turn by
// echoing the last message it was sent, with a checkpointer (package checkpoint) so each
// thread keeps its conversation and its state and history can be read back.
//
// The echo rule: a turn's input is {"messages":[{"role":"...","content":"..."}, ...]}. The
// thread's history becomes history + input messages + one assistant message whose content is
// the content of the last input message ("" when the input has no messages). The output is
// the whole history, {"messages":[...]}. Only the last MaxMessages messages are kept.
// Input whose messages are not a list of {role, content} strings is refused with 422
// (host.InputError), not a 500.
//
// Every turn commits one checkpoint (channel "messages", metadata {"source":"loop","step":n})
// through the checkpointer, and the newest 20 are kept per thread. By default the
// checkpointer is in process memory (checkpoint.Memory, for demos and tests, not
// production); Options.Checkpointer takes another one, such as blobcheckpoint.Saver, so
// threads survive restarts and are shared by instances.
//
// Memory is bounded by count and by bytes: each thread keeps at most MaxThreadBytes of
// messages (roles plus contents; 1 MiB; its oldest messages are dropped first, and a turn that
// alone exceeds it is refused with 422), so its 20 checkpoints hold at most about 20 times
// that. The default in-memory checkpointer keeps at most MaxTotalBytes (64 MiB of stored
// checkpoints, all threads together) and MaxThreads threads (1000), forgetting the least
// recently written threads first.
//
// Stream sends one event per message added in the turn, {"messages":[<message>]}, for the
// stream modes "values" and "updates"; any other mode fails the run.
package echoagent
