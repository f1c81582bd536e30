package azure

import (
	"context"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue"

	"github.com/funcgraph/funcgraph/pkg/azure/internal/azsdk"
)

// Options tunes NewClients. The zero value is ready to use.
type Options struct {
	// Credential replaces the credential built from the settings of an identity-based
	// connection (e.g. a test double or a credential the app built itself). Ignored for
	// connection strings.
	Credential azcore.TokenCredential
	// ClientOptions are passed to every SDK client (retries, transport, telemetry). Default:
	// the SDK defaults.
	ClientOptions azcore.ClientOptions
}

// Clients holds one service client per storage service of an account. Safe for concurrent
// use.
type Clients struct {
	Tables *aztables.ServiceClient
	Queues *azqueue.ServiceClient
	Blobs  *azblob.Client

	identity bool // built from identity-based settings (a refusal names the missing role)
}

// NewClients validates s and builds the three service clients. It makes no request.
// Errors never contain the connection string or a key.
func NewClients(s Settings, opts *Options) (*Clients, error) {
	if opts == nil {
		opts = &Options{}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	tOpts := &aztables.ClientOptions{ClientOptions: opts.ClientOptions}
	qOpts := &azqueue.ClientOptions{ClientOptions: opts.ClientOptions}
	bOpts := &azblob.ClientOptions{ClientOptions: opts.ClientOptions}
	var c Clients
	var err error
	if s.ConnectionString != "" {
		cs, err := parseConnectionString(s.ConnectionString)
		if err != nil {
			return nil, err
		}
		// The SDK parsers' errors describe the format, never the value.
		if c.Tables, err = aztables.NewServiceClientFromConnectionString(cs.raw, tOpts); err != nil {
			return nil, fmt.Errorf("create table client: %w", err)
		}
		if c.Queues, err = azqueue.NewServiceClientFromConnectionString(cs.raw, qOpts); err != nil {
			return nil, fmt.Errorf("create queue client: %w", err)
		}
		if c.Blobs, err = azblob.NewClientFromConnectionString(cs.raw, bOpts); err != nil {
			return nil, fmt.Errorf("create blob client: %w", err)
		}
		return &c, nil
	}
	cred := opts.Credential
	if cred == nil {
		if cred, err = newCredential(s, opts.ClientOptions); err != nil {
			return nil, err
		}
	}
	c.identity = true
	table, queue, blob := s.endpoints()
	if c.Tables, err = aztables.NewServiceClient(table, cred, tOpts); err != nil {
		return nil, fmt.Errorf("create table client: %w", err)
	}
	if c.Queues, err = azqueue.NewServiceClient(queue, cred, qOpts); err != nil {
		return nil, fmt.Errorf("create queue client: %w", err)
	}
	if c.Blobs, err = azblob.NewClient(blob, cred, bOpts); err != nil {
		return nil, fmt.Errorf("create blob client: %w", err)
	}
	return &c, nil
}

// newCredential builds the token credential of identity-based settings: the managed
// identity (user-assigned when ClientID is set) for "managedidentity" or a ClientID, else
// DefaultAzureCredential.
func newCredential(s Settings, co azcore.ClientOptions) (azcore.TokenCredential, error) {
	if strings.EqualFold(s.Credential, CredentialManagedIdentity) || s.ClientID != "" {
		o := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: co}
		if s.ClientID != "" {
			o.ID = azidentity.ClientID(s.ClientID)
		}
		cred, err := azidentity.NewManagedIdentityCredential(o)
		if err != nil {
			return nil, fmt.Errorf("create managed identity credential: %w", err)
		}
		return cred, nil
	}
	cred, err := azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{ClientOptions: co})
	if err != nil {
		return nil, fmt.Errorf("create default Azure credential: %w", err)
	}
	return cred, nil
}

// EnsureTable creates the table if it is missing and returns its client. Table names match
// ^[A-Za-z][A-Za-z0-9]{2,62}$. Under identity-based settings, a refusal is a
// *MissingRoleError naming RoleTableDataContributor.
func (c *Clients) EnsureTable(ctx context.Context, name string) (*aztables.Client, error) {
	if err := validateTableName(name); err != nil {
		return nil, err
	}
	if _, err := c.Tables.CreateTable(ctx, name, nil); err != nil && azsdk.Classify(err).Kind != azsdk.AlreadyExists {
		return nil, fmt.Errorf("create table %s: %w", name, c.setupError("table", err))
	}
	return c.Tables.NewClient(name), nil
}

// EnsureQueue creates the queue if it is missing and returns its client. Queue names are
// 3-63 lowercase letters, digits and single hyphens. Under identity-based settings, a
// refusal is a *MissingRoleError naming RoleQueueDataContributor.
func (c *Clients) EnsureQueue(ctx context.Context, name string) (*azqueue.QueueClient, error) {
	if err := validateQueueName(name); err != nil {
		return nil, err
	}
	q := c.Queues.NewQueueClient(name)
	if _, err := q.Create(ctx, nil); err != nil && azsdk.Classify(err).Kind != azsdk.AlreadyExists {
		return nil, fmt.Errorf("create queue %s: %w", name, c.setupError("queue", err))
	}
	return q, nil
}

// EnsureContainer creates the blob container if it is missing and returns its client.
// Container names are 3-63 lowercase letters, digits and single hyphens. Under
// identity-based settings, a refusal is a *MissingRoleError naming RoleBlobDataOwner.
func (c *Clients) EnsureContainer(ctx context.Context, name string) (*container.Client, error) {
	if err := ValidateContainerName(name); err != nil {
		return nil, err
	}
	cc := c.Blobs.ServiceClient().NewContainerClient(name)
	if err := azsdk.CreateContainer(ctx, cc); err != nil {
		return nil, fmt.Errorf("create container %s: %w", name, c.setupError("blob", err))
	}
	return cc, nil
}

// validateTableName checks Azure's table naming rule.
func validateTableName(name string) error {
	ok := len(name) >= 3 && len(name) <= 63 && isLetter(name[0]) && !strings.EqualFold(name, "tables")
	for i := 1; i < len(name) && ok; i++ {
		ok = isLetter(name[i]) || isDigit(name[i])
	}
	if !ok {
		return fmt.Errorf("invalid table name %q: use 3-63 letters and digits, starting with a letter", name)
	}
	return nil
}

// validateQueueName checks Azure's queue naming rule.
func validateQueueName(name string) error {
	if !validDNSName(name) {
		return fmt.Errorf("invalid queue name %q: use 3-63 lowercase letters, digits and single hyphens", name)
	}
	return nil
}

// ValidateContainerName checks Azure's blob container naming rule.
func ValidateContainerName(name string) error {
	if !validDNSName(name) {
		return fmt.Errorf("invalid container name %q: use 3-63 lowercase letters, digits and single hyphens", name)
	}
	return nil
}

func validDNSName(name string) bool {
	ok := len(name) >= 3 && len(name) <= 63 && name[0] != '-' && name[len(name)-1] != '-' && !strings.Contains(name, "--")
	for i := 0; i < len(name) && ok; i++ {
		c := name[i]
		ok = 'a' <= c && c <= 'z' || isDigit(c) || c == '-'
	}
	return ok
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
