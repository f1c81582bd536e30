package queuestore

import (
	"testing"
	"time"
)

func TestSeconds_RoundsUpAndClamps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d     time.Duration
		floor int32
		want  int32
	}{
		{0, 0, 0}, {0, 1, 1}, {-time.Second, 0, 0}, {time.Millisecond, 0, 1}, {1500 * time.Millisecond, 1, 2},
		{30 * time.Second, 1, 30}, {maxVisibility, 0, 604800}, {8 * 24 * time.Hour, 0, 604800},
	}
	for _, tt := range tests {
		if got := *seconds(tt.d, tt.floor); got != tt.want {
			t.Errorf("seconds(%v, %d) = %d, want %d", tt.d, tt.floor, got, tt.want)
		}
	}
}
