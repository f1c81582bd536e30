package sse

import "strconv"

// AppendEvent appends the frame `id: <id>\nevent: <event>\ndata: <data>\n\n` to dst: a frame a
// client resumes after by sending its id as Last-Event-ID. data must be one line of JSON.
func AppendEvent(dst []byte, id int64, event string, data []byte) []byte {
	dst = strconv.AppendInt(append(dst, "id: "...), id, 10)
	dst = append(append(append(dst, "\nevent: "...), event...), "\ndata: "...)
	return append(append(dst, data...), "\n\n"...)
}

// AppendEventID is AppendEvent with an id of any form; id must hold no line break.
func AppendEventID(dst []byte, id, event string, data []byte) []byte {
	dst = append(append(dst, "id: "...), id...)
	dst = append(append(append(dst, "\nevent: "...), event...), "\ndata: "...)
	return append(append(dst, data...), "\n\n"...)
}

// KeepAliveFrame is a comment frame: clients ignore it, and it keeps an idle stream's
// connection from looking dead to proxies.
const KeepAliveFrame = ": keep-alive\n\n"

// RetryFrame returns the frame `retry: <ms>\n\n`, which sets how long an EventSource waits
// before it reconnects once the response ends.
func RetryFrame(ms int) string { return "retry: " + strconv.Itoa(ms) + "\n\n" }
