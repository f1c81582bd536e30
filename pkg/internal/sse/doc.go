// Package sse is the bounded buffer of server-sent-event frames that a graph run writes and a
// request reads, shared by the hosting routes' buffered stream (package host) and the
// platform routes' runs/stream (package platform), and the frames both write.
//
// A Buffer accepts a graph's events as `event: <name>\ndata: <json>\n\n` frames until their
// bytes would pass its limit (the run then gets the overflow error and its context is
// cancelled), stops at the first failure, can be read while it fills (Since, Wake) and can
// be let go by a request that stopped waiting (Detach) while the run goes on. Error and end
// frames (Append) are never counted against the limit. What a frame's data is (an object as
// is, anything else wrapped) is the caller's Encoder. The runs API's feed writes frames with an
// id a client resumes after (AppendEvent), keep-alive comments and a retry frame.
//
// It is internal: users meet it only through StreamableGraph's emit function.
package sse
