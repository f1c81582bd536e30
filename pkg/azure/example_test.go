package azure_test

import (
	"context"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/azure"
)

// Identity-based settings, as an app would read them with os.Getenv.
func ExampleSettingsFrom() {
	env := map[string]string{
		"AzureWebJobsStorage__accountName": "myaccount",
		"AzureWebJobsStorage__credential":  "managedidentity",
		"AzureWebJobsStorage__clientId":    "00000000-0000-0000-0000-000000000001",
	}
	s := azure.SettingsFrom("", func(k string) string { return env[k] })
	fmt.Println(s.Configured(), s.UsesIdentity(), s.Validate())
	// Output: true true <nil>
}

// Clients for a local Azurite on its default ports; nothing is sent until a call is made.
func ExampleNewClients() {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: "UseDevelopmentStorage=true"}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(clients.Queues.URL())
	// Output: http://127.0.0.1:10001/devstoreaccount1
}

// Ensure the backends' table, queue and container exist at startup.
func ExampleClients_EnsureTable() {
	ctx := context.Background()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: "UseDevelopmentStorage=true"}, nil)
	if err != nil {
		return
	}
	if _, err := clients.EnsureTable(ctx, "funcgraphruns"); err != nil {
		return // Azurite is not running
	}
	_, _ = clients.EnsureQueue(ctx, "funcgraph-work")
	_, _ = clients.EnsureContainer(ctx, "funcgraph-payloads")
}
