package host

import (
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
	"github.com/funcgraph/funcgraph/pkg/membudget"
)

// countedBody is a request body that counts the reads of it.
type countedBody struct {
	r     io.Reader
	reads *atomic.Int32
}

func (b countedBody) Read(p []byte) (int, error) {
	b.reads.Add(1)
	return b.r.Read(p)
}

// An invoke or stream of a checkpointed graph whose declared body the memory budget has no
// room for is refused 507 before its body is read (observer: rejected, storage_full); a graph
// without a checkpointer, which writes nothing, and a body that fits still run.
func TestAdmit_CheckpointedPastTheMemoryBudget_Refused507Unread(t *testing.T) {
	t.Parallel()
	b, err := membudget.New(membudget.Limits{Total: 8000})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(t.Context(), "", 6500); err != nil { // 500 bytes left for new work
		t.Fatal(err)
	}
	obs := &recordingObserver{}
	a := testApp(t, Options{AuthLevel: funchost.AuthAnonymous, MemoryBudget: b, Observer: obs}, map[string]InvocableGraph{
		"chat":  &fakeGraph{fakeInvoker: fakeInvoker{checkpointer: true}},
		"plain": &fakeGraph{},
	}, nil)
	h := a.FunctionApp().Standalone(funchost.StandaloneOptions{Logger: a.Logger()})
	send := func(path, body string) (int, string, int32) {
		var reads atomic.Int32
		r := httptest.NewRequest("POST", path, countedBody{strings.NewReader(body), &reads})
		r.ContentLength = int64(len(body))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String(), reads.Load()
	}
	big := `{"input":{"m":"` + strings.Repeat("m", 600) + `"},"config":{"configurable":{"thread_id":"t1"}}}`
	small := `{"input":{"m":"hi"},"config":{"configurable":{"thread_id":"t1"}}}`
	want := `{"error":"error","detail":"` + apierror.StorageFullMessage + `"}`
	for _, route := range []string{"invoke", "stream"} {
		obs.reset()
		if code, body, reads := send("/api/graphs/chat/"+route, big); code != 507 || body != want || reads != 0 {
			t.Fatalf("chat %s past the budget: %d %s, %d reads; want 507 %s unread", route, code, body, reads, want)
		}
		if got := obs.events(); len(got) != 1 || !slices.Equal(got[0], []string{"rejected:storage_full"}) {
			t.Fatalf("chat %s past the budget: observer saw %v", route, got)
		}
		if code, body, _ := send("/api/graphs/chat/"+route, small); code != 200 {
			t.Fatalf("chat %s that fits: %d %s", route, code, body)
		}
		if code, body, _ := send("/api/graphs/plain/"+route, big); code != 200 {
			t.Fatalf("plain %s past the budget: %d %s, want 200 (it stores nothing)", route, code, body)
		}
	}
	if b.Used() != 6500 {
		t.Fatalf("the budget holds %d bytes, want 6500", b.Used())
	}
}
