package launch

import (
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestRetentionFromEnv_DefaultsAndSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		azure   bool
		want    engine.Retention
		wantErr string
	}{
		{name: "azure default off", azure: true},
		{name: "azure age", azure: true, env: map[string]string{envRetention: " 720h "}, want: engine.Retention{MaxAge: 720 * time.Hour}},
		{name: "azure ignores memory count", azure: true, env: map[string]string{envMemoryMaxRuns: "5"}},
		{name: "memory default", want: engine.Retention{MaxRuns: memoryMaxRuns, PerPass: memoryPerPass}},
		{name: "memory count and age", env: map[string]string{envMemoryMaxRuns: "10", envRetention: "1h"},
			want: engine.Retention{MaxRuns: 10, MaxAge: time.Hour, PerPass: memoryPerPass}},
		{name: "memory keeps all", env: map[string]string{envMemoryMaxRuns: "0"}, want: engine.Retention{PerPass: memoryPerPass}},
		{name: "bad age", azure: true, env: map[string]string{envRetention: "30"}, wantErr: envRetention},
		{name: "age too short", env: map[string]string{envRetention: "1s"}, wantErr: envRetention},
		{name: "negative age", env: map[string]string{envRetention: "-1h"}, wantErr: envRetention},
		{name: "bad count", env: map[string]string{envMemoryMaxRuns: "-1"}, wantErr: envMemoryMaxRuns},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := retentionFromEnv(func(k string) string { return tc.env[k] }, tc.azure)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr+": ") {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestFromEnv_Retention_ReachesTheEngineOptions: the in-memory default reaches the engine
// through Durable.EngineOptions, and a caller's own retention wins.
func TestFromEnv_Retention_ReachesTheEngineOptions(t *testing.T) {
	t.Parallel()
	env := map[string]string{envMemoryMaxRuns: "7"}
	s, err := FromEnv(t.Context(), func(k string) string { return env[k] }, ModeServe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Durable.EngineOptions(engine.Options{}).Retention; got.MaxRuns != 7 {
		t.Fatalf("engine retention %+v, want MaxRuns 7", got)
	}
	own := engine.Retention{MaxAge: time.Hour}
	if got := s.Durable.EngineOptions(engine.Options{Retention: own}).Retention; got != own {
		t.Fatalf("engine retention %+v, want the caller's %+v", got, own)
	}
	if got := (Durable{}).OrMemory().Retention; got != memoryRetention() {
		t.Fatalf("OrMemory retention %+v, want %+v", got, memoryRetention())
	}
}
