// Command emulate (a test harness, built by the Makefile, not by ./...) runs a Functions app folder under the emulated Functions host, for clients
// that are not Go tests (the JavaScript SDK tests): the folder a user hands to `func start`
// (host.json, local.settings.json, the function folders, the executable), with function-key
// auth enforced as in Azure. It prints `listening <url>` once the host answers, and serves
// until SIGINT or SIGTERM.
//
//	emulate --root <app folder> --function-key <key>
//
// The process environment is the app settings over local.settings.json's Values, as with
// Core Tools.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

func main() {
	root := flag.String("root", "", "the app folder (host.json and the function folders)")
	key := flag.String("function-key", "", "the host's default function key")
	quiet := flag.Bool("quiet", false, "drop the emulator's log lines")
	flag.Parse()
	if *root == "" || *key == "" {
		log.Fatal("emulate: --root and --function-key are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf := func(format string, args ...any) { log.Printf(format, args...) }
	if *quiet {
		logf = func(string, ...any) {}
	}
	// This process's environment is the one `func start` would run in: it wins over
	// local.settings.json's Values, for the handler and for the host's storage connections.
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	e, err := funchosttest.Start(ctx, funchosttest.Options{
		AppRoot: *root,
		Env:     env,
		Keys:    funchost.Keys{HostFunction: map[string]string{"default": *key}},
		Logf:    logf,
	})
	if err != nil {
		log.Fatalf("emulate: %v", err)
	}
	if errs := e.FunctionErrors(); len(errs) > 0 {
		_ = e.Close()
		log.Fatalf("emulate: functions failed to index: %v", errs)
	}
	fmt.Printf("listening %s\n", e.URL())
	<-ctx.Done()
	if err := e.Close(); err != nil {
		log.Fatalf("emulate: close: %v", err)
	}
}
