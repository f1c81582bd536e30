// Package agent builds a tool-calling agent as a durable graph: each model turn is one step,
// the turn's tool calls run as the branches of a fan-out (each call once, at once, its ID the
// key to deduplicate its side effects), tools that need approval pause the run on the exact
// calls the model made, and the tokens every turn cost are kept.
//
// The graph is an ordinary durable graph (durable.GraphRegistration[State]): register it,
// start it through the runs API or as a LangGraph assistant, run it as another graph's child
// run, or add nodes of your own before and after it on the same builder (Add).
//
// What is durable: a model reply that a step committed is never requested again, whatever
// crashes follow — the reply is in the state, and the run goes on from it. A model call in
// flight when its worker dies is requested again by the step's next attempt (its tokens are
// spent twice; the first reply is lost with the worker). A tool call runs again only if its
// worker died before its result was committed: use tool.IdempotencyKey for side effects.
package agent
