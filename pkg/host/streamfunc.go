package host

import "context"

// StreamFunc is Func's streaming twin: it adapts a typed function that emits chunks to a
// GraphLike. The request's input object is decoded into In as for Func (a mismatch is the
// same 422 `Validation error: input.<field>: <what was expected>`, and the function is not
// called; unknown input keys are ignored), and each Chunk passed to emit is one `data` frame
// of the stream (encoded as JSON):
//
//	type Progress struct{ Step string `json:"step"` }
//	app.Register(host.StreamFunc[Question, Progress](func(ctx context.Context, q Question, emit func(Progress) error) error {
//		if err := emit(Progress{Step: "thinking"}); err != nil {
//			return err
//		}
//		return emit(Progress{Step: "answered " + q.Text})
//	}), "ask", host.RegisterOptions{})
//
// Errors as for Func: a *ClientError or *InputError returned before the first chunk is
// answered with its status; after a chunk, any error ends the stream with the failure frame.
// Invoke runs the same function and answers its last chunk as the output (null when it
// emitted none). Use RequestFrom(ctx) for the thread id or config.
type StreamFunc[In, Chunk any] func(ctx context.Context, in In, emit func(Chunk) error) error

// Stream decodes the input and calls f, passing each chunk to emit.
func (f StreamFunc[In, Chunk]) Stream(ctx context.Context, req Request, emit func(chunk any) error) error {
	var in In
	if err := decodeInput(req.Input, &in); err != nil {
		return err
	}
	return f(withRequest(ctx, req), in, func(c Chunk) error { return emit(c) })
}

// Invoke decodes the input, calls f and returns its last chunk.
func (f StreamFunc[In, Chunk]) Invoke(ctx context.Context, req Request) (any, error) {
	var in In
	if err := decodeInput(req.Input, &in); err != nil {
		return nil, err
	}
	var last any
	err := f(withRequest(ctx, req), in, func(c Chunk) error {
		last = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	return last, nil
}

var _ GraphLike = StreamFunc[struct{}, struct{}](nil)
