package launch

import (
	"strings"
	"testing"
	"time"

	"github.com/funcgraph/funcgraph/pkg/host"
)

func TestFromEnv_MaxWait(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value   string
		want    time.Duration
		wantErr bool
	}{
		{"", 0, false}, {"90s", 90 * time.Second, false}, {" 229s ", 229 * time.Second, false},
		{"230s", 0, true}, {"5m", 0, true}, {"0s", 0, true}, {"-1s", 0, true}, {"soon", 0, true},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == envMaxWait {
				return tt.value
			}
			return ""
		}
		s, err := FromEnv(t.Context(), getenv, ModeServe, nil)
		if tt.wantErr {
			if err == nil || !strings.Contains(err.Error(), envMaxWait) || !strings.Contains(err.Error(), "230s") {
				t.Errorf("%s=%q: err = %v, want one naming the setting and the 230 s cut", envMaxWait, tt.value, err)
			}
			continue
		}
		if err != nil || s.MaxWait != tt.want {
			t.Errorf("%s=%q: MaxWait %v, err %v; want %v", envMaxWait, tt.value, s.MaxWait, err, tt.want)
		}
	}
}

func TestAssemble_PassesMaxWaitToTheHostingApp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		setting, want time.Duration
	}{{0, host.DefaultMaxWait}, {42 * time.Second, 42 * time.Second}} {
		a, err := Assemble(Settings{MaxWait: c.setting}, Spec{Platform: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Host.Options().MaxWait; got != c.want {
			t.Errorf("setting %v: hosting app MaxWait %v, want %v", c.setting, got, c.want)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
