package host

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

func TestState_Contract_BothTransports(t *testing.T) {
	state := func(_ context.Context, tid string) (StateView, error) {
		switch tid {
		case "known":
			return StateView{Values: map[string]any{"messages": []string{"hé"}}, Next: []string{"agent"}, Metadata: map[string]any{"step": 2}}, nil
		case "empty":
			return StateView{}, nil
		case "scalar":
			return StateView{Values: "text", Metadata: map[string]any{}}, nil
		case "gone", "it's":
			return StateView{}, fmt.Errorf("lookup: %w", ErrThreadNotFound)
		case "panic":
			panic("secret")
		default:
			return StateView{}, errors.New("secret storage failure")
		}
	}
	app := testApp(t, Options{}, map[string]InvocableGraph{
		"g":         &fakeGraph{state: state},
		"stateless": &fakeInvoker{},
	}, nil)
	tests := []struct {
		name, graph, tid string
		status           int
		want             string
	}{
		{"known thread", "g", "known", 200, `{"values": {"messages": ["h\u00e9"]}, "next": ["agent"], "metadata": {"step": 2}}`},
		{"never seen thread", "g", "empty", 200, `{"values": {}, "next": [], "metadata": null}`},
		{"non-object values and empty metadata", "g", "scalar", 200, `{"values": {}, "next": [], "metadata": null}`},
		{"not found", "g", "gone", 404, errBody("Thread 'gone' not found")},
		{"other error hidden", "g", "broken", 500, errBody("Internal error while retrieving thread state")},
		{"panic hidden", "g", "panic", 500, errBody("Internal error while retrieving thread state")},
		{"thread id too long", "g", strings.Repeat("a", 257), 400, errBody("Thread ID exceeds maximum length of 256 characters")},
		{"thread id not printable ascii", "g", "t\u00e9", 400, errBody("Thread ID must contain only printable ASCII characters")},
		{"quote in thread id", "g", "it's", 404, errBody(`Thread "it's" not found`)},
		{"graph without state has no route", "stateless", "known", 404, ""},
	}
	for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
		for _, tt := range tests {
			t.Run(tr.Name+"/"+tt.name, func(t *testing.T) {
				got := call(t, tr, "GET", "/api/graphs/"+tt.graph+"/threads/"+url.PathEscape(tt.tid)+"/state", "", tr.FunctionKey)
				if got.status != tt.status {
					t.Fatalf("status = %d, want %d (%s)", got.status, tt.status, got.body)
				}
				if tt.want != "" && got.body != tt.want {
					t.Fatalf("body = %s, want %s", got.body, tt.want)
				}
				if strings.Contains(got.body, "secret") {
					t.Fatalf("leak: %s", got.body)
				}
				if tt.want != "" && !isJSONType(got.header.Get("Content-Type")) {
					t.Fatalf("Content-Type = %q", got.header.Get("Content-Type"))
				}
			})
		}
	}
}
