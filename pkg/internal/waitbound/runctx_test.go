package waitbound

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRunContext_TiedUntilTheBound checks the run's context, waited on or not: the request's
// end before the bound cancels it (for good), after the bound it does not, and RunInline's
// return always does.
func TestRunContext_TiedUntilTheBound(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		wait        bool // Done is called before the request ends
		endBefore   bool // the request ends before the bound passes
		wantAtBound error
	}{
		{"never waited, request ends first", false, true, context.Canceled},
		{"waited, request ends first", true, true, context.Canceled},
		{"never waited, request ends after the bound", false, false, nil},
		{"waited, request ends after the bound", true, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reqCtx, endRequest := context.WithCancel(t.Context())
			c := newRunContext(reqCtx)
			var done <-chan struct{}
			if tt.wait {
				done = c.Done()
			}
			if tt.endBefore {
				endRequest()
			}
			c.detach() // the bound passes
			endRequest()
			if err := c.Err(); !errors.Is(err, tt.wantAtBound) || (err == nil) != (tt.wantAtBound == nil) {
				t.Fatalf("after the bound, Err = %v, want %v", err, tt.wantAtBound)
			}
			if done == nil {
				done = c.Done()
			}
			select {
			case <-done:
				if tt.wantAtBound == nil {
					t.Fatal("Done closed after the bound though the run goes on")
				}
			case <-time.After(20 * time.Millisecond):
				if tt.wantAtBound != nil {
					t.Fatal("Done still open for a cancelled run")
				}
			}
			c.end()
			<-done
			if err, cause := c.Err(), context.Cause(c); err != context.Canceled || cause != context.Canceled {
				t.Fatalf("after the run, Err = %v, Cause = %v; want canceled", err, cause)
			}
		})
	}
}

// TestRunContext_ChildrenFollowTheRun: a context derived from the run's ends with the
// request's end before the bound, and with the run.
func TestRunContext_ChildrenFollowTheRun(t *testing.T) {
	t.Parallel()
	reqCtx, endRequest := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
	c := newRunContext(reqCtx)
	child, cancel := context.WithTimeout(c, time.Minute)
	defer cancel()
	if child.Value(ctxKey{}) != "v" {
		t.Fatal("the child lost the request's values")
	}
	endRequest()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the request's end did not reach the run's child")
	}

	c = newRunContext(context.Background())
	child, cancel = context.WithCancel(c)
	defer cancel()
	c.end()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the run's end did not reach its child")
	}
	if _, ok := c.Deadline(); ok {
		t.Fatal("the run's context has a deadline")
	}
}
