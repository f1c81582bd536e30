package engine

import (
	"encoding/json"
	"testing"
)

// parseWorkItem reads what encodeWorkItem writes as encoding/json does, and declines every
// other body.
func TestParseWorkItem_SameAsJSON(t *testing.T) {
	t.Parallel()
	items := []workItem{
		{V: 1, RunID: "r", Gen: 1},
		{V: 1, RunID: "0b5e7c1e-2f0d-4b8c-9a51-3f2b8c0d1e2f", Gen: 3, Step: 1100, Nonce: "a1b2c3d4e5f6"},
		{V: 1, RunID: "run 1", Gen: 2, Step: 3, Nonce: "n", Retry: 4, Trace: "00-4bf9-01 k=v,x=y", VersionWaits: 5},
		{V: 1, RunID: "r", Gen: 999999999999999999, Step: 7, VersionWaits: 1},
	}
	for _, want := range items {
		body := encodeWorkItem(want)
		var got, viaJSON workItem
		if !parseWorkItem(body, &got) {
			t.Errorf("parse %s: declined", body)
		}
		if err := json.Unmarshal(body, &viaJSON); err != nil || got != want || viaJSON != want {
			t.Errorf("parse %s = %+v, json %+v (%v), want %+v", body, got, viaJSON, err, want)
		}
	}
	for _, body := range []string{
		`{"v":1,"run_id":"r","gen":1,"step":0} `,
		`{"v":1,"run_id":"r\u0041","gen":1,"step":0}`,
		`{"v":1,"run_id":"r","gen":01,"step":0}`,
		`{"v":1,"run_id":"r","gen":1,"step":-1}`,
		`{"v":1,"run_id":"r","gen":1234567890123456789,"step":0}`,
		`{"v":1,"run_id":"r","gen":1,"step":0,"x":1}`,
		`{"v":1,"run_id":"é","gen":1,"step":0}`,
		`{"v":1,"step":0,"run_id":"r","gen":1}`,
		`{"v":2,"run_id":"r","gen":1,"step":0}`,
		`{"v":1,"run_id":"r","gen":1,"step":0`,
	} {
		it := workItem{RunID: "untouched"}
		if parseWorkItem([]byte(body), &it) || it.RunID != "untouched" {
			t.Errorf("parse %s: accepted as %+v", body, it)
		}
	}
}

func TestWorkItem_TraceIsOptional(t *testing.T) {
	t.Parallel()
	old, _, err := decodeWorkItem([]byte(`{"v":1,"run_id":"r","gen":2,"step":3}`))
	if err != nil || old.Trace != "" || old.RunID != "r" || old.Gen != 2 || old.Step != 3 {
		t.Fatalf("old item: %+v, %v", old, err)
	}
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 k=v,x=y"
	body := encodeWorkItem(workItem{V: 1, RunID: "r", Gen: 2, Step: 3, Trace: tp})
	it, _, err := decodeWorkItem(body)
	if err != nil || it.Trace != tp || it.Step != 3 {
		t.Fatalf("decode(%s) = %+v, %v", body, it, err)
	}
	if got := string(encodeWorkItem(workItem{V: 1, RunID: "r", Gen: 1, Step: 0})); got != `{"v":1,"run_id":"r","gen":1,"step":0}` {
		t.Fatalf("item without trace = %s; want the old encoding", got)
	}
}

// A branch's work item carries its index, attempt, node, item and resent mark, and decodes back
// to them; items with inconsistent branch members are refused.
func TestWorkItem_BranchMembers(t *testing.T) {
	t.Parallel()
	want := branchWork{workItem: workItem{V: 1, RunID: "r", Gen: 2, Step: 5, Nonce: "n"}, Index: 3, Attempt: 2, Node: "wörk \"x\"",
		Item: rawJSON(`{"k":[1,"\u00e9"]}`), Resent: true}
	body := encodeBranchWork(want)
	_, got, err := decodeWorkItem(body)
	if err != nil || got == nil || got.Index != 3 {
		t.Fatalf("decode(%s) = %+v, %v", body, got, err)
	}
	if *got != want {
		t.Fatalf("decode(%s) = %+v, want %+v", body, *got, want)
	}
	first := encodeBranchWork(branchWork{workItem: workItem{V: 1, RunID: "r", Gen: 1, Step: 1}, Index: 0, Node: "w"})
	if string(first) != `{"v":1,"run_id":"r","gen":1,"step":1,"br":0,"bn":"w"}` {
		t.Fatalf("branch 0 = %s", first)
	}
	for _, body := range []string{
		`{"v":1,"run_id":"r","gen":1,"step":1,"br":-1,"bn":"w"}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"br":1}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"br":256,"bn":"w"}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"br":1,"bn":"w","ba":-1}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"bn":"w"}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"ba":1}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"br":1,"bn":"w","bs":2}`,
		`{"v":1,"run_id":"r","gen":1,"step":1,"bs":1}`,
	} {
		if it, br, err := decodeWorkItem([]byte(body)); err == nil {
			t.Errorf("decode(%s) = %+v %+v, want refused", body, it, br)
		}
	}
}
