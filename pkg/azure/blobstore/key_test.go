package blobstore

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"run-1/1/state", "r 'x'%/2/😀", strings.Repeat("é", MaxKeyLength)} {
		if err := checkKey(k); err != nil {
			t.Errorf("%q: %v", k, err)
		}
	}
	for _, k := range []string{"", "a\\b", "a.", "a/", "a\x00b", "\xff", strings.Repeat("é", MaxKeyLength+1)} {
		if err := checkKey(k); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("%q: err = %v, want ErrInvalidEntity", k, err)
		}
	}
}

func FuzzCheckKey(f *testing.F) {
	f.Add("run/1/x")
	f.Fuzz(func(t *testing.T, k string) {
		if err := checkKey(k); err != nil && !errors.Is(err, engine.ErrInvalidEntity) {
			t.Fatalf("error %v does not wrap ErrInvalidEntity", err)
		}
	})
}
