//go:build integration

package bloblock_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/funcgraph/funcgraph/pkg/azure"
	"github.com/funcgraph/funcgraph/pkg/azure/bloblock"
	"github.com/funcgraph/funcgraph/pkg/azure/blobstore"
	"github.com/funcgraph/funcgraph/pkg/azure/queuestore"
	"github.com/funcgraph/funcgraph/pkg/azure/tablestore"
	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/internal/azuritetest"
)

// storageScope is the scope the storage SDKs ask a credential for.
const storageScope = "https://storage.azure.com/.default"

// jwtCredential is an azcore.TokenCredential handing out unsigned JWTs for audience aud, as
// a managed identity would hand out signed ones. Azurite's basic OAuth checks audience,
// issuer and lifetime, not signatures. It records the scopes it was asked for.
type jwtCredential struct {
	aud string

	mu     sync.Mutex
	scopes []string // guarded by mu
}

func (c *jwtCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	c.scopes = append(c.scopes, opts.Scopes...)
	c.mu.Unlock()
	now := time.Now()
	seg := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	token := seg(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + seg(map[string]any{
		"aud": c.aud, "iss": "https://sts.windows.net/00000000-0000-0000-0000-000000000001/",
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
		"oid": "00000000-0000-0000-0000-000000000002", "tid": "00000000-0000-0000-0000-000000000001",
	}) + "." + base64.RawURLEncoding.EncodeToString([]byte("unsigned"))
	return azcore.AccessToken{Token: token, ExpiresOn: now.Add(time.Hour)}, nil
}

func (c *jwtCredential) asked() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.scopes)
}

// identityClients reads identity-based settings (the three service URIs of az, a
// user-assigned managed identity) as launch does, and builds the clients with cred standing
// in for that identity.
func identityClients(t *testing.T, az azuritetest.OAuthAzurite, cred azcore.TokenCredential) *azure.Clients {
	t.Helper()
	env := map[string]string{
		"AzureWebJobsStorage__blobServiceUri":  az.BlobURL,
		"AzureWebJobsStorage__queueServiceUri": az.QueueURL,
		"AzureWebJobsStorage__tableServiceUri": az.TableURL,
		"AzureWebJobsStorage__credential":      azure.CredentialManagedIdentity,
		"AzureWebJobsStorage__clientId":        "00000000-0000-0000-0000-000000000003",
	}
	settings := azure.SettingsFrom("", func(k string) string { return env[k] })
	if !settings.UsesIdentity() {
		t.Fatalf("settings %+v are not identity-based", settings)
	}
	clients, err := azure.NewClients(settings, &azure.Options{Credential: cred, ClientOptions: azcore.ClientOptions{Transport: az.Client}})
	if err != nil {
		t.Fatalf("NewClients: %v", err)
	}
	return clients
}

// The distributed lock opens from identity-based settings through the same clients as the
// engine's stores (azure.SettingsFrom → azure.NewClients → bloblock.Open), against an Azurite
// that accepts bearer tokens: no connection string exists to fall back to.
func TestIntegrationOpen_IdentitySettings_SameClientsAsEngine(t *testing.T) {
	az := azuritetest.StartOAuth(t)
	ctx := t.Context()
	cred := &jwtCredential{aud: "https://storage.azure.com"}
	clients := identityClients(t, az, cred)

	container := azuritetest.UniqueName("identity-locks-")
	l, err := bloblock.Open(ctx, clients, container, bloblock.Options{LeaseDuration: 15 * time.Second})
	if err != nil {
		t.Fatalf("Open with identity-based settings: %v", err)
	}
	defer l.Close()
	other, err := bloblock.Open(ctx, clients, container, bloblock.Options{LeaseDuration: 15 * time.Second})
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	defer other.Close()
	tok, ok, err := l.Acquire(ctx, "g", "t", 0)
	if err != nil || !ok {
		t.Fatalf("Acquire = %v, %v; want acquired", ok, err)
	}
	if _, ok, err := other.Acquire(ctx, "g", "t", 0); ok || err != nil {
		t.Fatalf("second instance Acquire while held = %v, %v; want not acquired, no error", ok, err)
	}
	l.Release("g", "t", tok)
	tok, ok, err = other.Acquire(ctx, "g", "t", time.Second)
	if err != nil || !ok {
		t.Fatalf("second instance Acquire after release = %v, %v; want acquired", ok, err)
	}
	other.Release("g", "t", tok)
	if len(cred.asked()) == 0 {
		t.Fatal("the lock never asked the identity for a token")
	}

	// The engine's stores on the same clients.
	store, err := tablestore.Open(ctx, clients, azuritetest.UniqueName("identityruns"))
	if err != nil {
		t.Fatalf("tablestore.Open: %v", err)
	}
	if _, err := store.Submit(ctx, []engine.Op{{Kind: engine.OpInsert, Entity: engine.Entity{PartitionKey: "run-1", RowKey: "head"}}}); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	queue, err := queuestore.Open(ctx, clients, azuritetest.UniqueName("identity-work-"))
	if err != nil {
		t.Fatalf("queuestore.Open: %v", err)
	}
	if err := queue.Enqueue(ctx, []byte("item"), 0); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	payloads, err := blobstore.Open(ctx, clients, azuritetest.UniqueName("identity-payloads-"))
	if err != nil {
		t.Fatalf("blobstore.Open: %v", err)
	}
	if err := payloads.Put(ctx, "run-1/state", []byte("{}")); err != nil {
		t.Fatalf("Put: %v", err)
	}

	scopes := cred.asked()
	if slices.IndexFunc(scopes, func(s string) bool { return s != storageScope }) >= 0 {
		t.Errorf("credential asked for scopes %v; want %s only", scopes, storageScope)
	}
}

// The same Azurite refuses a token for another audience: the test above passes because the
// lock authenticated with the identity's tokens, not because the emulator lets anyone in.
func TestIntegrationOpen_IdentitySettings_WrongAudienceRefused(t *testing.T) {
	az := azuritetest.StartOAuth(t)
	clients := identityClients(t, az, &jwtCredential{aud: "https://vault.azure.net"})
	l, err := bloblock.Open(t.Context(), clients, azuritetest.UniqueName("identity-locks-"), bloblock.Options{})
	if err == nil {
		l.Close()
		t.Fatal("Open with a token for another audience succeeded; want Azurite to refuse it")
	}
	if !strings.Contains(err.Error(), "blob service answered 403") {
		t.Errorf("Open with a token for another audience = %v; want the service's 403", err)
	}
}
