// Package echoagent is the echo_agent example graph: a chat "agent" that answers every turn by
// echoing the last message it was sent, with an in-memory checkpointer so each thread keeps its
// conversation and its state can be read back.
//
// The echo rule: a turn's input is {"messages":[{"role":"...","content":"..."}, ...]}. The
// thread's history becomes history + input messages + one assistant message whose content is
// the content of the last input message ("" when the input has no messages). The output is
// the whole history, {"messages":[...]}. Only the last MaxMessages messages are kept.
// Input whose messages are not a list of {role, content} strings is refused with 422
// (host.InputError), not a 500.
//
// Memory is bounded by count and by bytes (roles plus contents): each thread keeps at most
// MaxThreadBytes (1 MiB; its oldest messages are dropped first, and a turn that alone exceeds it
// is refused with 422), all threads together at most MaxTotalBytes (64 MiB; the oldest threads
// are forgotten first), and at most MaxThreads threads (1000).
//
// Stream sends one event per message added in the turn, {"messages":[<message>]}, for the
// stream modes "values" and "updates"; any other mode fails the run.
//
// The checkpointer lives in process memory: it is for demos and tests, not production.
package echoagent
