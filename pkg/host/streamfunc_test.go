package host

import (
	"context"
	"net/http"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

type progress struct {
	Step string `json:"step"`
	N    int    `json:"n"`
}

func countTo(_ context.Context, in orderIn, emit func(progress) error) error {
	if in.Item == "gone" {
		return &ClientError{Status: http.StatusNotFound, Message: "No such item"}
	}
	for i := 1; i <= in.Count; i++ {
		if err := emit(progress{Step: in.Item, N: i}); err != nil {
			return err
		}
	}
	return nil
}

// TestStreamFunc_TypedStreamAndSame422_BothTransports (issue #21): a plain Go function streams
// typed chunks, and an input that does not decode is the 422 of Func, on stream and invoke.
func TestStreamFunc_TypedStreamAndSame422_BothTransports(t *testing.T) {
	t.Parallel()
	app := testApp(t, Options{}, map[string]InvocableGraph{"count": StreamFunc[orderIn, progress](countTo)}, nil)
	bad := errBody("Validation error: input.count: Input should be a valid integer, got string")
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"stream", "/api/graphs/count/stream", `{"input":{"item":"tea","count":2,"extra":true}}`, 200,
			dataFrame(`{"step": "tea", "n": 1}`) + dataFrame(`{"step": "tea", "n": 2}`) + "event: end\ndata: {}\n\n"},
		{"stream decode failure is 422", "/api/graphs/count/stream", `{"input":{"count":"two"}}`, 422, bad},
		{"stream client error", "/api/graphs/count/stream", `{"input":{"item":"gone"}}`, 404, errBody("No such item")},
		{"invoke answers the last chunk", "/api/graphs/count/invoke", `{"input":{"item":"tea","count":3}}`, 200, `{"output":{"step":"tea","n":3}}`},
		{"invoke decode failure is 422", "/api/graphs/count/invoke", `{"input":{"count":"two"}}`, 422, bad},
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, tt := range tests {
			t.Run(tr.Name+"/"+tt.name, func(t *testing.T) {
				got := call(t, tr, http.MethodPost, tt.path, tt.body, tr.FunctionKey)
				if got.status != tt.status || got.body != tt.want {
					t.Fatalf("got %d %q, want %d %q", got.status, got.body, tt.status, tt.want)
				}
			})
		}
	}
}
