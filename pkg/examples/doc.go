// Package examples holds the three example durable graphs of the Python original, ported to Go
// with the original's handler names so that their graph hashes are equal: data_pipeline
// (sequential), content_classifier (conditional routing with fan-in) and support_agent (human
// in the loop, waiting for an "approval" event). The example app registers them with All.
//
// It is not a library: the graphs exist to demonstrate and test the durable runtime.
package examples
