package launch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/launch"
)

// Identity-based settings (no connection string) reach the distributed lock: FromEnv opens it
// on the account instead of refusing with ErrDistributedNeedsStorage. The context is already
// cancelled, so the attempt ends before any request leaves the process.
func TestFromEnv_DistributedLock_IdentitySettings(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	env := map[string]string{
		"GRAPH_LOCK_BACKEND":                "distributed",
		launch.EnvStorage + "__accountName": "acct1",
		launch.EnvStorage + "__credential":  "managedidentity",
		launch.EnvStorage + "__clientId":    "00000000-0000-0000-0000-000000000001",
		"FUNCGRAPH_LOCK_CONTAINER":          "identity-locks",
	}
	_, err := launch.FromEnv(ctx, envOf(env), launch.ModeFunctions, discard())
	if err == nil || errors.Is(err, launch.ErrDistributedNeedsStorage) {
		t.Fatalf("FromEnv = %v; want the lock opened on the account (failing here on the cancelled context)", err)
	}
	if !strings.Contains(err.Error(), "open distributed thread lock") || !strings.Contains(err.Error(), "identity-locks") {
		t.Errorf("FromEnv = %v; want an error opening the lock's container", err)
	}
}
