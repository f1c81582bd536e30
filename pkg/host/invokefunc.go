package host

import "context"

// InvokeFunc adapts a plain function to an InvocableGraph, so a graph without streaming or
// thread state needs no type of its own:
//
//	app.Register(host.InvokeFunc(func(ctx context.Context, req host.Request) (any, error) {
//		return req.Input, nil
//	}), "echo", host.RegisterOptions{})
type InvokeFunc func(ctx context.Context, req Request) (any, error)

// Invoke calls f.
func (f InvokeFunc) Invoke(ctx context.Context, req Request) (any, error) { return f(ctx, req) }
