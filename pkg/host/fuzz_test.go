package host

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/internal/apierror"
)

// FuzzParseRunRequest checks the request validator on arbitrary bodies: it never panics, it
// accepts only strict JSON, every error is one of the contract's kinds, and an accepted
// request's input is a JSON object within the limits.
func FuzzParseRunRequest(f *testing.F) {
	for _, seed := range []string{
		`{"input":{"messages":[{"role":"user","content":"hi"}]},"config":{"configurable":{"thread_id":"t1"}}}`,
		`{"input":{},"config":null,"version":"1"}`,
		`{"input":{"a":{"a":{"a":[1,2,{"b":null}]}}},"stream_mode":"values"}`,
		`{"input":{"a":1,"a":{"b":2}}}`,
		`{"input":[],"config":{"configurable":{"thread_id":7}}}`,
		`{"input":{},"config":{"configurable":{"thread_id":"a\n"}}}`,
		"\ufeff{}", `{"input":NaN}`, "", "[", `{"input":{"\u00e9":"\ud83d\ude00"}}`,
	} {
		f.Add([]byte(seed))
	}
	lim := limits{maxBody: 1 << 20, maxDepth: 4, maxNodes: 20}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, kind := range []requestKind{invokeRequestKind, streamRequestKind} {
			req, err := parseRunRequest(body, kind, lim)
			strict := utf8.Valid(body) && json.Valid(body)
			if err != nil {
				if !errors.Is(err, apierror.ErrBadRequest) && !errors.Is(err, apierror.ErrValidation) && !errors.Is(err, errInvalidConfig) &&
					!errors.Is(err, errTooDeep) && !errors.Is(err, errTooManyNode) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				if status := apierror.Status(err); status != 400 && status != 422 {
					t.Fatalf("status %d for %v", status, err)
				}
				continue
			}
			if !strict {
				t.Fatalf("accepted non-strict JSON %q", body)
			}
			var input map[string]any
			if err := json.Unmarshal(req.Input, &input); err != nil {
				t.Fatalf("input %s is not an object: %v", req.Input, err)
			}
			if req.Config.ThreadID != "" {
				if err := ValidateThreadID(req.Config.ThreadID); err != nil {
					t.Fatalf("accepted thread id %q: %v", req.Config.ThreadID, err)
				}
			}
			tree, _ := parseStrict(req.Input, lim.maxDepth+2)
			if err := checkLimits(tree, tree.root, lim.maxDepth, lim.maxNodes); err != nil {
				t.Fatalf("accepted input over the limits: %v", err)
			}
			if _, err := marshalDumps(req.Input); err != nil {
				t.Fatalf("dumps of accepted input: %v", err)
			}
		}
	})
}
