package platform

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// TestRuns_StreamLive_Standalone: in serve mode a stream's frames reach the client as the
// graph emits them, before the run ends; through the Functions host the same body arrives
// whole.
func TestRuns_StreamLive_Standalone(t *testing.T) {
	gate := make(chan struct{})
	f := newFixture(t, host.Options{}, func(g *memGraph) {
		g.stream = func(ctx context.Context, req host.Request, emit func(any) error) error {
			if err := emit(map[string]any{"step": 1}); err != nil {
				return err
			}
			if strings.Contains(string(req.Input), "gate") {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return emit(map[string]any{"step": 2})
		}
	})
	want := "event: values\ndata: {\"step\": 1}\n\nevent: values\ndata: {\"step\": 2}\n\nevent: end\ndata: null\n\n"
	for _, tr := range f.trs {
		if tr.Name != "standalone" {
			r := do(t, tr, "POST", "/api/runs/stream", `{"assistant_id":"plain"}`)
			if r.status != 501 {
				t.Fatalf("%s: %d %s", tr.Name, r.status, r.body)
			}
			tid := newThread(t, tr, "")
			if r := do(t, tr, "POST", "/api/threads/"+tid+"/runs/stream", `{"assistant_id":"chat"}`); r.status != 200 || !strings.HasSuffix(r.body, want) {
				t.Fatalf("%s: buffered stream %d %q", tr.Name, r.status, r.body)
			}
			continue
		}
		tid := newThread(t, tr, "")
		req, _ := http.NewRequestWithContext(t.Context(), "POST", tr.BaseURL+"/api/threads/"+tid+"/runs/stream", strings.NewReader(`{"assistant_id":"chat","input":{"gate":1}}`))
		req.Header.Set("x-functions-key", tr.FunctionKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		rd := bufio.NewReader(res.Body)
		got := ""
		deadline := time.AfterFunc(10*time.Second, func() { close(gate) })
		for !strings.Contains(got, `{"step": 1}`) {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("read before the run ended: %v (got %q)", err, got)
			}
			got += line
		}
		if !deadline.Stop() {
			t.Fatal("the first frame arrived only after the run was let go")
		}
		close(gate)
		for {
			line, err := rd.ReadString('\n')
			got += line
			if err != nil {
				break
			}
		}
		if !strings.HasSuffix(got, want) {
			t.Fatalf("live stream %q; want the suffix %q", got, want)
		}
	}
}
