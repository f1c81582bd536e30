package azure

import (
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
)

// The Azure RBAC roles the app's identity needs on the storage account under identity-based
// settings (docs/storage.md, "Identity-based storage"). Management roles such as Owner or Contributor
// do not grant data access.
const (
	// RoleTableDataContributor lets the app create its tables and read and write their
	// entities (runs, run index, threads).
	RoleTableDataContributor = "Storage Table Data Contributor"
	// RoleQueueDataContributor lets the app create the work queue and send, receive, update
	// and delete its messages (the queue trigger and the embedded dispatcher).
	RoleQueueDataContributor = "Storage Queue Data Contributor"
	// RoleBlobDataOwner is what the Functions host needs on AzureWebJobsStorage (its keys and
	// timer leases); it includes the Storage Blob Data Contributor that funcgraph's own
	// containers need (payloads, live logs, checkpoints, lock leases).
	RoleBlobDataOwner = "Storage Blob Data Owner"
)

// MissingRoleError reports that a storage service refused the app's identity an operation
// (403 AuthorizationPermissionMismatch or AuthorizationFailure) under identity-based
// settings: the identity lacks Role on the account. It never carries a key, token or URL.
type MissingRoleError struct {
	// Service is "table", "queue" or "blob".
	Service string
	// Role is the built-in role that grants what was refused.
	Role string
	// Status and Code are the service's answer.
	Status int
	Code   string
}

// Error reads `the app's identity lacks the "<role>" role on the storage account (the
// <service> service answered <status> <code>)`, plus a hint on network rules for
// AuthorizationFailure.
func (e *MissingRoleError) Error() string {
	msg := fmt.Sprintf("the app's identity lacks the %q role on the storage account (the %s service answered %d %s)",
		e.Role, e.Service, e.Status, e.Code)
	if e.Code == "AuthorizationFailure" {
		msg += "; if it has the role, the account's network rules may refuse this client"
	}
	return msg
}

// roleFor is the role each service needs.
var roleFor = map[string]string{"table": RoleTableDataContributor, "queue": RoleQueueDataContributor, "blob": RoleBlobDataOwner}

// setupError reduces an error of creating a service's table, queue or container: a refusal
// under identity-based settings becomes a *MissingRoleError naming the role; anything else
// is reduced to its status and code (no URL, no message).
func (c *Clients) setupError(service string, err error) error {
	if a := azsdk.Classify(err); c.identity && a.Kind == azsdk.PermissionDenied {
		return &MissingRoleError{Service: service, Role: roleFor[service], Status: a.Status, Code: a.Code}
	}
	return azsdk.Reduce(service, err, nil)
}
