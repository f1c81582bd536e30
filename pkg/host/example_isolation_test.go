package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/isolation"
)

// owners is a host.ThreadOwners over a map; platform.Mount attaches the platform's thread
// store instead.
type owners struct {
	mu sync.Mutex
	m  map[string]string
}

func (o *owners) ThreadOwner(_ context.Context, tid string) (any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if owner, ok := o.m[tid]; ok {
		return owner, nil
	}
	return nil, host.ErrThreadNotFound
}

func (o *owners) CreateThread(_ context.Context, tid, owner string) (any, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.m[tid]; ok {
		return prev, nil
	}
	o.m[tid] = owner
	return owner, nil
}

// Per-user isolation on the hosting routes, standalone behind a proxy at 192.0.2.1 that sets
// X-User: a new thread id becomes its first caller's; another identity meets it as missing.
func ExampleGraphHostApp_SetIsolation() {
	iso, err := isolation.New(isolation.Config{IdentityHeader: "X-User",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	app, err := host.New(host.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := app.Register(upper{}, "upper", host.RegisterOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	app.SetIsolation(iso, &owners{m: map[string]string{}})
	srv := app.FunctionApp().Standalone(funchost.StandaloneOptions{Keys: funchost.Keys{
		HostFunction: map[string]string{"default": "f"}}})
	as := func(user string) string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/graphs/upper/invoke",
			strings.NewReader(`{"input":{"text":"hi"},"config":{"configurable":{"thread_id":"t1"}}}`))
		req.RemoteAddr = "192.0.2.1:41000"
		req.Header.Set("x-functions-key", "f")
		if user != "" {
			req.Header.Set("X-User", user)
		}
		srv.ServeHTTP(rec, req)
		return fmt.Sprintf("%d %s", rec.Code, rec.Body)
	}
	fmt.Println(as("alice"))
	fmt.Println(as("bob"))
	fmt.Println(as(""))
	// Output:
	// 200 {"output":{"text":"HI"}}
	// 404 {"error":"error","detail":"Thread 't1' not found"}
	// 401 {"error":"error","detail":"Unauthorized: the request carries no caller identity"}
}
