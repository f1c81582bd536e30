package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/engine"
)

func TestCheckPayloadKey_BlobNameRules(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"run-1/1/state", "r 'x'%/2/😀", strings.Repeat("é", engine.MaxPayloadKeyLength), "a..b/c", ".x/y", "x/.../y"} {
		if err := engine.CheckPayloadKey(k); err != nil {
			t.Errorf("%q: %v", k, err)
		}
	}
	for _, k := range []string{"", "a\\b", "a.", "a/", "a\x00b", "\xff", strings.Repeat("é", engine.MaxPayloadKeyLength+1),
		"../n/x.json", "./n/x.json", "run/../x.json", "run/./x.json"} {
		if err := engine.CheckPayloadKey(k); !errors.Is(err, engine.ErrInvalidEntity) {
			t.Errorf("%q: err = %v, want ErrInvalidEntity", k, err)
		}
	}
}

func FuzzCheckPayloadKey(f *testing.F) {
	f.Add("run/1/x")
	f.Add("../x")
	f.Fuzz(func(t *testing.T, k string) {
		err := engine.CheckPayloadKey(k)
		if err != nil && !errors.Is(err, engine.ErrInvalidEntity) {
			t.Fatalf("error %v does not wrap ErrInvalidEntity", err)
		}
		if err == nil {
			for _, seg := range strings.Split(k, "/") {
				if seg == "." || seg == ".." {
					t.Fatalf("%q passed with a dot segment", k)
				}
			}
		}
	})
}
