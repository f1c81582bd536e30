package tablethreads_test

import (
	"log/slog"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/tablethreads"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/platform"
)

// A thread store on table (threads and their index) and container clients the app already has, so the platform routes' threads are
// shared by every instance (a launch.Builder finds one opened in launch.Settings.Threads).
// Building the clients sends nothing.
func ExampleNew() {
	logger := slog.Default()
	clients, err := azure.NewClients(azure.Settings{ConnectionString: "UseDevelopmentStorage=true"}, nil)
	if err != nil {
		panic(err)
	}
	table := clients.Tables.NewClient("funcgraphthreads")
	index := clients.Tables.NewClient("funcgraphthreadsindex")
	values := clients.Blobs.ServiceClient().NewContainerClient("funcgraphthreads-values")
	app, err := host.New(host.Options{PlatformCompat: true, Logger: logger})
	if err != nil {
		panic(err)
	}
	svc, err := platform.Mount(app, platform.Options{Threads: tablethreads.New(table, index, values, logger)})
	if err != nil {
		panic(err)
	}
	defer svc.Close()
}
