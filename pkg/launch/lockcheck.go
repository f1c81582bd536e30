package launch

import (
	"errors"
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// errLockNotFromSettings is returned by Run when GRAPH_LOCK_BACKEND=distributed but the app's
// graph hosting runs under another thread lock than Settings.ThreadLock (a host.New without
// it, say): a scaled-out app would serialise threads per instance only.
var errLockNotFromSettings = errors.New("launch: the hosting app does not use the distributed thread lock of the settings")

// checkThreadLock refuses to serve an app whose hosting app's lock is not the settings' one
// while the settings ask for a distributed lock. An app with no hosting app has no lock to
// check. It runs on whatever the Builder returned, however the app was built.
func checkThreadLock(app *funchost.FunctionApp, s Settings) error {
	if !strings.EqualFold(strings.TrimSpace(s.LockBackend), "distributed") {
		return nil
	}
	var got lock.ThreadLock
	for _, c := range app.Components() {
		if h, ok := c.(interface{ ThreadLock() lock.ThreadLock }); ok {
			got = h.ThreadLock()
			break
		}
	}
	if got == nil || got == s.ThreadLock {
		return nil
	}
	return fmt.Errorf("%w: %s=distributed, but the graphs are hosted under a %T; build the hosting app with "+
		"the settings' lock (host.Options{ThreadLock: s.ThreadLock, LockBackendSetting: s.LockBackend}, as launch.Assemble does) "+
		"or unset %s for local development", errLockNotFromSettings, envLockBackend, got, envLockBackend)
}
