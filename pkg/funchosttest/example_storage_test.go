package funchosttest_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// ExampleStart_storageQueue starts the emulator with a real queue connection: the app's
// queue-triggered functions are then fed from that storage queue (Azurite here) instead of
// the in-memory queues, and functionTimeout is shortened so a test of it stays fast. The
// handler would be the app's custom handler; appRoot holds host.json and the function folders.
func ExampleStart_storageQueue() {
	appRoot := "testdata/app" // host.json + <function>/function.json with a queueTrigger
	var handler http.Handler  // e.g. app.CustomHandler(funchost.HandlerOptions{})
	e, err := funchosttest.Start(context.Background(), funchosttest.Options{
		AppRoot: appRoot,
		Handler: handler,
		Env: map[string]string{
			// the trigger's `connection` (default AzureWebJobsStorage); for Azurite on its
			// default ports "UseDevelopmentStorage=true" works too.
			"AzureWebJobsStorage": "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=...;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;",
		},
		FunctionTimeout:    2 * time.Second, // instead of host.json's functionTimeout
		ListenerVisibility: 2 * time.Second, // renew message visibility every second
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	// ... enqueue base64 messages with azqueue, wait for the effects ...
	fmt.Println("handler restarts after timeouts:", e.Restarts())
}
