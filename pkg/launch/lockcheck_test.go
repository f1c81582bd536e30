package launch

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/host"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// fakeLock stands for the settings' distributed lock.
type fakeLock struct{ lock.ThreadLock }

func (*fakeLock) Acquire(context.Context, string, string, time.Duration) (string, bool, error) {
	return "t", true, nil
}

// Issue #21: GRAPH_LOCK_BACKEND=distributed cannot be bypassed by a hosting app built without
// the settings' lock (host.New reads no environment), whichever way it was built.
func TestCheckThreadLock_DistributedNeedsTheSettingsLock(t *testing.T) {
	settingsLock := &fakeLock{}
	distributed := Settings{LockBackend: " Distributed ", ThreadLock: settingsLock}
	plain, err := host.New(host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	withLock, err := host.New(host.Options{ThreadLock: settingsLock})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		app     *host.GraphHostApp
		s       Settings
		wantErr bool
	}{
		{"host.New(host.Options{}) under distributed", plain, distributed, true},
		{"the settings' lock", withLock, distributed, false},
		{"in-process setting", plain, Settings{}, false},
	}
	for _, tt := range tests {
		err := checkThreadLock(tt.app.FunctionApp(), tt.s)
		if got := err != nil; got != tt.wantErr {
			t.Errorf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
		if err != nil && (!errors.Is(err, errLockNotFromSettings) || !strings.Contains(err.Error(), "InProcessThreadLock")) {
			t.Errorf("%s: err = %v, want errLockNotFromSettings naming the lock in use", tt.name, err)
		}
	}
	if err := checkThreadLock(funchost.NewFunctionApp(), distributed); err != nil {
		t.Errorf("an app with no hosting app: %v", err)
	}
}
