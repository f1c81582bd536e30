package exampleapp

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/checkpoint"
	"github.com/funcgraph/funcgraph/pkg/launch"
	"github.com/funcgraph/funcgraph/pkg/lock"
	"github.com/funcgraph/funcgraph/pkg/memory"
	"github.com/funcgraph/funcgraph/pkg/platform/threads"
)

// distributedLock stands for a distributed lock: any ThreadLock other than the in-process one.
type distributedLock struct{ lock.ThreadLock }

func engineStorage() launch.Durable {
	return launch.Durable{Store: memory.NewStore(), Queue: memory.NewQueue(), Payloads: memory.NewPayloadStore(), EmbeddedDispatcher: true}
}

// A distributed deployment with an in-process store fails fast, naming what is missing.
func TestBuild_DistributedNeedsSharedStorage(t *testing.T) {
	dist := distributedLock{lock.NewInProcessThreadLock()}
	tests := []struct {
		name    string
		cfg     Config
		missing string // "" means Build succeeds
	}{
		{"in-process deployment keeps memory", Config{}, ""},
		{"all in memory", Config{LockBackendSetting: "distributed", ThreadLock: dist}, "platform threads, checkpointer, durable engine storage"},
		{"checkpointer in memory", Config{LockBackendSetting: "distributed", ThreadLock: dist, PlatformThreads: threads.NewMemory(),
			Durable: engineStorage()}, "checkpointer"},
		{"threads in memory", Config{LockBackendSetting: "distributed", ThreadLock: dist, Checkpointer: checkpoint.NewMemory(checkpoint.MemoryOptions{}),
			Durable: engineStorage()}, "platform threads"},
		{"engine in memory", Config{LockBackendSetting: "distributed", ThreadLock: dist, PlatformThreads: threads.NewMemory(),
			Checkpointer: checkpoint.NewMemory(checkpoint.MemoryOptions{})}, "durable engine storage"},
		// Shared stores are stood in by the memory twins: Build only checks they are given.
		{"shared stores", Config{LockBackendSetting: "distributed", ThreadLock: dist, PlatformThreads: threads.NewMemory(),
			Checkpointer: checkpoint.NewMemory(checkpoint.MemoryOptions{}), Durable: engineStorage()}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app, err := Build(tt.cfg)
			if tt.missing == "" {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				_ = app.Close()
				return
			}
			if !errors.Is(err, ErrDistributedNeedsSharedStorage) || !strings.Contains(err.Error(), "(in process memory: "+tt.missing+")") {
				t.Fatalf("Build = %v; want ErrDistributedNeedsSharedStorage naming %s", err, tt.missing)
			}
		})
	}
}
