package host

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchost"
	"github.com/funcgraph/funcgraph/pkg/lock"
)

// otherLock is a ThreadLock that is not the in-process one.
type otherLock struct{ *lock.InProcessThreadLock }

func TestNew_GraphLockBackend_FailsFastWithInProcessLock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setting string
		lock    lock.ThreadLock
		wantErr bool
		value   string
	}{
		{"unset", "", nil, false, ""},
		{"inprocess", "inprocess", nil, false, ""},
		{"inprocess mixed case and spaces", "  InProcess ", nil, false, ""},
		{"distributed with default lock", "distributed", nil, true, "distributed"},
		{"trimmed and lower-cased", " Distributed\t", nil, true, "distributed"},
		{"explicit in-process lock", "blob", lock.NewInProcessThreadLock(), true, "blob"},
		{"other backend passes", "distributed", otherLock{lock.NewInProcessThreadLock()}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(Options{LockBackendSetting: tt.setting, ThreadLock: tt.lock})
			if (err != nil) != tt.wantErr {
				t.Fatalf("New = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr {
				return
			}
			want := "GRAPH_LOCK_BACKEND='" + tt.value + "' requires a distributed thread_lock backend (for example BlobLeaseThreadLock), " +
				"but the app is still using the default InProcessThreadLock. Pass thread_lock explicitly or unset GRAPH_LOCK_BACKEND for local dev."
			if err.Error() != want || !errors.Is(err, ErrLockBackendMismatch) {
				t.Fatalf("error = %q, want %q", err, want)
			}
		})
	}
}

func TestNew_InvalidOptions_Refused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
	}{
		{"unknown auth level", Options{AuthLevel: "public"}},
		{"unknown health level", Options{HealthAuthLevel: "x"}},
		{"negative body cap", Options{MaxRequestBodyBytes: -1}},
		{"negative stream cap", Options{MaxStreamResponseBytes: -1}},
		{"negative depth", Options{MaxInputDepth: -1}},
		{"negative nodes", Options{MaxInputNodes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := New(tt.opts); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("New = %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func TestNew_AnonymousAuth_WarnsEveryTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level     funchost.AuthLevel
		wantWarns int
	}{
		{funchost.AuthAnonymous, 2},
		{funchost.AuthFunction, 0},
		{"", 0},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, nil))
		for range 2 {
			if _, err := New(Options{AuthLevel: tt.level, Logger: logger}); err != nil {
				t.Fatal(err)
			}
		}
		if got := strings.Count(buf.String(), "level=WARN"); got != tt.wantWarns ||
			(tt.wantWarns > 0 && !strings.Contains(buf.String(), "publicly accessible without authentication")) {
			t.Fatalf("level %q: %d warnings in %s", tt.level, got, buf.String())
		}
	}
}
