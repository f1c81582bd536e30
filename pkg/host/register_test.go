package host

import (
	"errors"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

func TestRegister_Checks_InOrderWithContractMessages(t *testing.T) {
	t.Parallel()
	var nilGraph *fakeInvoker
	tests := []struct {
		name     string
		graph    InvocableGraph
		gname    string
		wantErr  error
		wantText string
	}{
		{"nil graph before name checks", nil, "", ErrNotAGraph, "Graph must have an invoke() method. Got <nil>"},
		{"typed nil graph", nilGraph, "ok", ErrNotAGraph, "Graph must have an invoke() method. Got *host.fakeInvoker"},
		{"empty name", &fakeInvoker{}, "", ErrEmptyName, "Graph name must not be empty"},
		{"invalid name", &fakeInvoker{}, "9lives", ErrInvalidName,
			"Invalid graph name '9lives'. Must start with a letter, contain only letters, digits, underscores or hyphens, and be 1\u201364 characters."},
		{"duplicate", &fakeInvoker{}, "echo", ErrDuplicateName, "Graph 'echo' is already registered"},
		{"duplicate ignoring case", &fakeInvoker{}, "ECHO", ErrDuplicateName, "Graph 'ECHO' is already registered"},
		{"reserved by another surface", &fakeInvoker{}, "Durable", ErrDuplicateName, "Graph 'Durable' is already registered"},
		{"new name", &fakeInvoker{}, "other", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app, err := New(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := app.Register(&fakeInvoker{}, "echo", RegisterOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := app.ReserveGraphName("durable"); err != nil {
				t.Fatal(err)
			}
			err = app.Register(tt.graph, tt.gname, RegisterOptions{})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Register = %v, want %v", err, tt.wantErr)
			}
			if err != nil && err.Error() != tt.wantText {
				t.Fatalf("message = %q, want %q", err.Error(), tt.wantText)
			}
		})
	}
}

func TestRegister_Functions_NamedAndRoutedPerCapability(t *testing.T) {
	t.Parallel()
	app, err := New(Options{AuthLevel: funchost.AuthFunction})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(app.Register(&fakeGraph{}, "full", RegisterOptions{AuthLevel: funchost.AuthAnonymous}))
	must(app.Register(&fakeInvoker{}, "inv", RegisterOptions{}))
	must(app.Register(&fakeGraph{}, "nostream", RegisterOptions{NoStream: true}))
	got := map[string]string{}
	for _, fn := range app.FunctionApp().HTTPFunctions() {
		got[fn.Name] = fn.Methods[0] + " " + fn.Route + " " + string(fn.AuthLevel)
	}
	want := map[string]string{
		"fg_health":          "GET health anonymous",
		"fg_health_details":  "GET health/details function",
		"fg_openapi":         "GET openapi.json function",
		"fg_full_invoke":     "POST graphs/full/invoke anonymous",
		"fg_full_stream":     "POST graphs/full/stream anonymous",
		"fg_full_state":      "GET graphs/full/threads/{thread_id}/state anonymous",
		"fg_inv_invoke":      "POST graphs/inv/invoke function",
		"fg_inv_stream":      "POST graphs/inv/stream function",
		"fg_nostream_invoke": "POST graphs/nostream/invoke function",
		"fg_nostream_state":  "GET graphs/nostream/threads/{thread_id}/state function",
	}
	if len(got) != len(want) {
		t.Fatalf("functions = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestRegister_RouteConflict_RegistersNothing(t *testing.T) {
	t.Parallel()
	app, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Another surface took the stream route of "g".
	if err := app.FunctionApp().HandleHTTP(funchost.HTTPFunction{Name: "other", Route: "graphs/g/stream",
		Methods: []string{"POST"}, Handler: nil}); err == nil {
		t.Fatal("nil handler accepted")
	}
	if err := app.FunctionApp().HandleHTTP(funchost.HTTPFunction{Name: "other", Route: "graphs/g/stream",
		Methods: []string{"POST"}, Handler: app.FunctionApp().Standalone(funchost.StandaloneOptions{})}); err != nil {
		t.Fatal(err)
	}
	before := len(app.FunctionApp().HTTPFunctions())
	if err := app.Register(&fakeGraph{}, "g", RegisterOptions{}); !errors.Is(err, funchost.ErrRouteConflict) {
		t.Fatalf("Register = %v, want ErrRouteConflict", err)
	}
	if after := len(app.FunctionApp().HTTPFunctions()); after != before {
		t.Fatalf("functions %d → %d after a refused registration", before, after)
	}
	if err := app.Register(&fakeGraph{}, "g", RegisterOptions{NoStream: true}); err != nil {
		t.Fatalf("name not released after refusal: %v", err)
	}
}

func TestAsyncGraphs_Flags_ListedInOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		asyncRuns bool
		want      []string
	}{
		{"per graph", false, []string{"b"}},
		{"app wide", true, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app, err := New(Options{AsyncRuns: tt.asyncRuns})
			if err != nil {
				t.Fatal(err)
			}
			_ = app.Register(&fakeInvoker{}, "a", RegisterOptions{})
			_ = app.Register(&fakeInvoker{}, "b", RegisterOptions{AsyncMode: true})
			if got := app.AsyncGraphs(); len(got) != len(tt.want) || got[0] != tt.want[0] {
				t.Fatalf("AsyncGraphs = %v, want %v", got, tt.want)
			}
		})
	}
}
