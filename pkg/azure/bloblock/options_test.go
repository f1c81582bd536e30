package bloblock

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

func TestBlobLeaseOptions_Validate_LeaseDuration(t *testing.T) {
	c, err := container.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/c", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		d       time.Duration
		want    int32
		wantErr string
	}{
		{"default", 0, 60, ""},
		{"min", 15 * time.Second, 15, ""},
		{"max", 60 * time.Second, 60, ""},
		{"infinite constant", InfiniteLease, -1, ""},
		{"minus one second", -time.Second, -1, ""},
		{"too short", 14 * time.Second, 0, "got 14"},
		{"too long", 61 * time.Second, 0, "got 61"},
		{"fractional", 15500 * time.Millisecond, 0, "got 15.5"},
		{"milliseconds", 10 * time.Millisecond, 0, "got 0.01"},
		{"minus two", -2 * time.Second, 0, "got -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Options{Container: c, LeaseDuration: tt.d}.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate(%v) = %v, want nil", tt.d, err)
				}
				if got, _ := leaseSeconds(tt.d); got != tt.want {
					t.Errorf("leaseSeconds(%v) = %d, want %d", tt.d, got, tt.want)
				}
				return
			}
			const prefix = "lease_duration must be -1 (infinite) or between 15 and 60 seconds; "
			if err == nil || err.Error() != prefix+tt.wantErr {
				t.Errorf("Validate(%v) = %v, want %q", tt.d, err, prefix+tt.wantErr)
			}
		})
	}
}

func TestBlobLeaseOptions_NilContainer_ErrorSaysContainerMustExist(t *testing.T) {
	_, err := New(t.Context(), Options{})
	if err == nil || !strings.Contains(err.Error(), "must already exist") || !strings.Contains(err.Error(), "CreateContainer") {
		t.Errorf("New(nil container) = %v, want an error naming the container requirement", err)
	}
}

func TestNewBlobLeaseThreadLock_AutoRenewOff_Warns(t *testing.T) {
	// New makes no storage call without CreateContainer: a client of a closed port will do.
	c, err := container.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/c", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		duration time.Duration
		disable  bool
		wantWarn bool
		wantRenw bool
	}{
		{"finite without renew warns", 15 * time.Second, true, true, false},
		{"infinite without renew is quiet", InfiniteLease, true, false, false},
		{"infinite with renew does not renew", InfiniteLease, false, false, false},
		{"default renews quietly", 0, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, nil))
			l, err := New(t.Context(), Options{
				Container: c, LeaseDuration: tt.duration, DisableAutoRenew: tt.disable, Logger: log,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if got := strings.Contains(buf.String(), "level=WARN"); got != tt.wantWarn {
				t.Errorf("warning logged = %v, want %v; log: %s", got, tt.wantWarn, buf.String())
			}
			if got := l.stopRenewer != nil; got != tt.wantRenw {
				t.Errorf("renewer running = %v, want %v", got, tt.wantRenw)
			}
			if tt.wantRenw && l.renewEvery != 20*time.Second {
				t.Errorf("renew interval = %v, want 20s for a 60 s lease", l.renewEvery)
			}
		})
	}
}
