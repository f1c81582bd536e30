package blobcheckpoint_test

import (
	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/blobcheckpoint"
	"github.com/funcgraph/funcgraph/pkg/examples/echoagent"
)

// A saver on a container client the app already has (a launch.Builder finds one opened in
// launch.Settings.Checkpoints), given to a graph as its checkpointer so threads survive
// restarts and are shared by instances. Building the clients sends nothing; the first request
// is the graph's first checkpoint.
func ExampleNew() {
	clients, err := azure.NewClients(azure.Settings{ConnectionString: "UseDevelopmentStorage=true"}, nil)
	if err != nil {
		panic(err)
	}
	c := clients.Blobs.ServiceClient().NewContainerClient(blobcheckpoint.DefaultContainer)
	saver := blobcheckpoint.New(c, blobcheckpoint.Options{})
	agent := echoagent.New(echoagent.Options{Checkpointer: saver})
	_ = agent // register it: app.Register(agent, echoagent.Name, host.RegisterOptions{})
}
