package platform

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzParseRun checks that the RunCreate parser never panics and that whatever it accepts is
// a valid object with an assistant id, its stream modes distinct with the first as
// StreamMode, and if_not_exists and on_completion normalised.
func FuzzParseRun(f *testing.F) {
	for _, s := range []string{`{"assistant_id":"a"}`, `{"assistant_id":"a","stream_mode":["x"],"input":{"a":[1]}}`, `[]`, ``, `{"input":1}`,
		`{"assistant_id":"a","stream_mode":["values","updates","values"],"if_not_exists":"create","on_completion":"keep"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		obj, err := parseBody([]byte(body), requiredSchema)
		if err != nil {
			return
		}
		req, err := runSchema(obj)
		if err != nil {
			return
		}
		if !json.Valid(req.Input) || kindOf(req.Input) != 'o' {
			t.Fatalf("accepted input %q", req.Input)
		}
		_ = checkLimits(req.Input, 32, 10000)
		modes := req.modes()
		if modes[0] != req.StreamMode || len(req.StreamModes) == 1 || len(dedupe(slices.Clone(modes))) != len(modes) {
			t.Fatalf("stream modes %q (first %q)", modes, req.StreamMode)
		}
		if (req.IfNotExists != "" && req.IfNotExists != "create") || (req.OnCompletion != "" && req.OnCompletion != "keep") {
			t.Fatalf("if_not_exists %q, on_completion %q", req.IfNotExists, req.OnCompletion)
		}
	})
}

// FuzzCheckLimits compares the token walker with a recursive walk of the decoded value.
func FuzzCheckLimits(f *testing.F) {
	for _, s := range []string{`{"a":{"b":[1,{"c":2}]}}`, `[[[]]]`, `{}`, `[1,2,3,4]`} {
		f.Add(s, 3, 3)
	}
	f.Add(`[0]`, 8, 0) // no node cap (the routes never pass 0: host.Options gives 10000)
	f.Fuzz(func(t *testing.T, doc string, maxDepth, maxNodes int) {
		if !json.Valid([]byte(doc)) || maxDepth < 1 || maxNodes < 0 || maxDepth > 64 {
			return
		}
		var v any
		_ = json.Unmarshal([]byte(doc), &v)
		depth, nodes := measure(v, 1)
		got := checkLimits(json.RawMessage(doc), maxDepth, maxNodes)
		switch _, isContainer := v.(map[string]any); {
		case !isContainer && kindOf(json.RawMessage(doc)) != 'a':
			if got != nil {
				t.Fatalf("scalar %s refused: %v", doc, got)
			}
		case depth <= maxDepth && (maxNodes == 0 || nodes <= maxNodes): // 0: no node cap
			if got != nil {
				t.Fatalf("%s (depth %d, nodes %d) refused under %d/%d: %v", doc, depth, nodes, maxDepth, maxNodes, got)
			}
		default:
			if got == nil {
				t.Fatalf("%s (depth %d, nodes %d) accepted under %d/%d", doc, depth, nodes, maxDepth, maxNodes)
			}
		}
	})
}

// measure returns the deepest value's depth below a container at depth d, and the node count.
func measure(v any, d int) (int, int) {
	maxD, n := d, 0
	visit := func(c any) {
		n++
		cd, cn := measure(c, d+1)
		if cd > maxD {
			maxD = cd
		}
		n += cn
	}
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			visit(c)
		}
	case []any:
		for _, c := range x {
			visit(c)
		}
	default:
		return d, 0
	}
	return maxD, n
}
