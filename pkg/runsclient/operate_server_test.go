package runsclient_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/runsclient"
)

// TestClient_StateAndSearchKeys_RealServer: the state of a run waiting for approval, read while
// it waits, and the runs started with a business key listed by it, on the real server.
func TestClient_StateAndSearchKeys_RealServer(t *testing.T) {
	c := serveMemory(t).client(t)
	ctx := t.Context()
	for i, id := range []string{"t-7", "t-8", "t-9"} {
		ticket := "T-7"
		if i == 2 {
			ticket = "T-9"
		}
		in := supportInput{UserMessage: "I want a refund for invoice " + id}
		if _, err := runsclient.Start(ctx, c, "support_agent", in, &runsclient.StartOptions{InstanceID: id, SearchKeys: map[string]string{"ticket_id": ticket}}); err != nil {
			t.Fatal(err)
		}
	}
	var st *runsclient.RunState
	var s examples.SupportState
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var err error
		if s, st, err = runsclient.StateOf[examples.SupportState](ctx, c, "t-7"); err != nil {
			t.Fatal(err)
		}
		if len(st.At.WaitingFor) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if st.RuntimeStatus != runsclient.StatusRunning || !slices.Equal(st.At.WaitingFor, []string{"approval"}) || st.GraphName != "support_agent" ||
		s.UserMessage != "I want a refund for invoice t-7" || !s.NeedsHuman {
		t.Fatalf("state %+v (%+v): want Running, waiting for approval, with its state", st, s)
	}
	page, err := c.List(ctx, runsclient.ListOptions{Keys: map[string]string{"ticket_id": "T-7"}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range page.Runs {
		ids = append(ids, r.InstanceID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"t-7", "t-8"}) {
		t.Fatalf("runs with ticket_id T-7: %v", ids)
	}
	if _, err := c.State(ctx, "no-such-run"); !errors.Is(err, runsclient.ErrNotFound) {
		t.Fatalf("the state of an unknown run: %v, want ErrNotFound", err)
	}
}
