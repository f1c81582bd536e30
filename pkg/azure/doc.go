// Package azure is funcgraph on Azure Storage. At its root it turns the Azure Functions
// storage setting into Azure SDK clients for Tables, Queues and Blobs (Settings, NewClients),
// and creates the tables, queues and containers a backend needs (Clients.EnsureTable,
// EnsureQueue, EnsureContainer: the only place that creates them).
//
// Two forms of the setting are understood, as the Functions host does for
// AzureWebJobsStorage:
//
//   - a connection string in the setting itself (AzureWebJobsStorage), including
//     "UseDevelopmentStorage=true" for a local Azurite on its default ports
//     (10000 blob, 10001 queue, 10002 table);
//   - an identity-based connection, with no secret in the settings:
//     AzureWebJobsStorage__accountName=<account> (endpoints https://<account>.<service>.core.windows.net),
//     or explicit AzureWebJobsStorage__tableServiceUri, __queueServiceUri and __blobServiceUri;
//     AzureWebJobsStorage__credential=managedidentity uses the app's managed identity, and
//     AzureWebJobsStorage__clientId=<client id> picks a user-assigned identity. Without
//     __credential the azidentity DefaultAzureCredential chain is used (environment, workload
//     identity, managed identity, Azure CLI, …), which is what a developer machine needs.
//     The identity needs the RoleTableDataContributor, RoleQueueDataContributor and
//     RoleBlobDataOwner roles on the account (Owner for blobs because the Functions host uses
//     the same account; funcgraph's own containers need only Storage Blob Data Contributor).
//     When creating a table, queue or container is refused for want of a role, the Ensure
//     methods return a *MissingRoleError naming it.
//
// The package never reads the environment: callers pass a getenv function (os.Getenv in
// main, a map in tests) to SettingsFrom, or fill Settings themselves.
//
// It is not a storage backend: tablestore, queuestore and blobstore take the clients it
// builds and know nothing of settings.
package azure
