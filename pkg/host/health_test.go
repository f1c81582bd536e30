package host

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
	"github.com/funcgraph/funcgraph/pkg/internal/version"
)

func TestHealth_Routes_BothTransports(t *testing.T) {
	head := `{"status":"ok","funcgraph_version":"` + version.Version + `",`
	tests := []struct {
		name        string
		opts        Options
		path        string
		key         string // "fn", "master" or ""
		status      int
		want        string
		withDetails bool
	}{
		{name: "health anonymous by default", path: "/api/health", status: 200, want: `{"status":"ok"}`},
		{name: "health never lists graphs", path: "/api/health", key: "fn", status: 200, want: `{"status":"ok"}`},
		{name: "details need a key by default", path: "/api/health/details", status: 401, want: ""},
		{name: "details with key", path: "/api/health/details", key: "fn", status: 200,
			want: head + `"graphs":[{"name":"zeta","description":"Zeta <graph>","has_checkpointer":true},{"name":"alpha","description":null,"has_checkpointer":false}]}`},
		{name: "details contributed members", path: "/api/health/details", key: "fn", status: 200, withDetails: true,
			want: head + `"graphs":[{"name":"zeta","description":"Zeta <graph>","has_checkpointer":true},{"name":"alpha","description":null,"has_checkpointer":false}],"durable_graphs":[{"graph_name":"d"}]}`},
		{name: "details follow anonymous app level", opts: Options{AuthLevel: funchost.AuthAnonymous}, path: "/api/health/details", status: 200},
		{name: "details own level", opts: Options{HealthDetailsAuthLevel: funchost.AuthAnonymous}, path: "/api/health/details", status: 200},
		{name: "health can require a key", opts: Options{HealthAuthLevel: funchost.AuthFunction}, path: "/api/health", status: 401},
		{name: "health admin level takes the master key", opts: Options{HealthAuthLevel: funchost.AuthAdmin}, path: "/api/health", key: "master", status: 200},
		{name: "wrong method is 404", path: "/api/health", key: "post", status: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := testApp(t, tt.opts, nil, nil)
			if err := app.Register(&fakeInvoker{checkpointer: true}, "zeta", RegisterOptions{Description: "Zeta <graph>"}); err != nil {
				t.Fatal(err)
			}
			if err := app.Register(&fakeInvoker{}, "alpha", RegisterOptions{}); err != nil {
				t.Fatal(err)
			}
			if tt.withDetails {
				if err := app.AddHealthDetails("durable_graphs", func() any { return []map[string]string{{"graph_name": "d"}} }); err != nil {
					t.Fatal(err)
				}
			}
			for _, tr := range funchosttest.Transports(t, app.FunctionApp()) {
				method, key := "GET", ""
				switch tt.key {
				case "fn":
					key = tr.FunctionKey
				case "master":
					key = tr.MasterKey
				case "post":
					method = "POST"
				}
				got := call(t, tr, method, tt.path, "", key)
				if got.status != tt.status {
					t.Fatalf("%s: status %d, want %d", tr.Name, got.status, tt.status)
				}
				if (tt.want != "" || tt.status != 200) && got.body != tt.want {
					t.Fatalf("%s: body %s, want %s", tr.Name, got.body, tt.want)
				}
				if tt.status == 200 && !isJSONType(got.header.Get("Content-Type")) {
					t.Fatalf("%s: Content-Type %q", tr.Name, got.header.Get("Content-Type"))
				}
			}
		})
	}
}

func TestAddHealthDetails_ReservedKeys_Refused(t *testing.T) {
	app := testApp(t, Options{}, nil, nil)
	for _, key := range []string{"", "status", "funcgraph_version", "graphs"} {
		if err := app.AddHealthDetails(key, func() any { return 1 }); err == nil {
			t.Errorf("AddHealthDetails(%q) succeeded", key)
		}
	}
	if err := app.AddHealthDetails("x", func() any { return 1 }); err != nil {
		t.Fatal(err)
	}
	if err := app.AddHealthDetails("x", func() any { return 1 }); err == nil {
		t.Fatal("second AddHealthDetails(x) succeeded")
	}
}
