package funchost_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// hello is the handler the serving examples serve.
var hello = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") })

// get fetches url and prints the status and body.
func get(url string) {
	res, err := http.Get(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Println(res.StatusCode, string(body))
}

// Serve runs until its context ends, then drains in-flight requests. ready reports the bound
// address (useful with port 0).
func ExampleServe() {
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- funchost.Serve(ctx, "127.0.0.1:0", hello, slog.New(slog.DiscardHandler), func(a net.Addr) { ready <- a })
	}()
	get("http://" + (<-ready).String() + "/")
	stop() // in main: signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	fmt.Println(<-done)
	// Output:
	// 200 hello
	// <nil>
}

// ServeConfig is Serve with explicit timeouts and limits; zero fields keep their defaults.
func ExampleServeConfig() {
	cfg := funchost.ServerConfig{ReadHeaderTimeout: 5 * time.Second, ShutdownTimeout: 10 * time.Second}
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- funchost.ServeConfig(ctx, cfg, "127.0.0.1:0", hello, slog.New(slog.DiscardHandler), func(a net.Addr) { ready <- a })
	}()
	get("http://" + (<-ready).String() + "/")
	stop()
	fmt.Println(<-done)
	// Output:
	// 200 hello
	// <nil>
}

// NewServer validates the configuration up front (before any listener opens) and fills in
// the defaults of zero fields.
func ExampleNewServer() {
	srv, err := funchost.NewServer(funchost.ServerConfig{IdleTimeout: time.Minute}, hello, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(srv.Config().IdleTimeout, srv.Config().ReadHeaderTimeout)

	_, err = funchost.NewServer(funchost.ServerConfig{IdleTimeout: -time.Second}, hello, nil)
	fmt.Println(err != nil)
	// Output:
	// 1m0s 10s
	// true
}

// Serve on a listener of your own (here on a free loopback port) until the context ends.
func ExampleServer_Serve() {
	srv, err := funchost.NewServer(funchost.DefaultServerConfig(), hello, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	get("http://" + ln.Addr().String() + "/")
	stop()
	fmt.Println(<-done)
	// Output:
	// 200 hello
	// <nil>
}
