package engine

import "testing"

func TestWorkItem_TraceIsOptional(t *testing.T) {
	t.Parallel()
	old, err := decodeWorkItem([]byte(`{"v":1,"run_id":"r","gen":2,"step":3}`))
	if err != nil || old.Trace != "" || old.RunID != "r" || old.Gen != 2 || old.Step != 3 {
		t.Fatalf("old item: %+v, %v", old, err)
	}
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 k=v,x=y"
	body := encodeWorkItem(workItem{V: 1, RunID: "r", Gen: 2, Step: 3, Trace: tp})
	it, err := decodeWorkItem(body)
	if err != nil || it.Trace != tp || it.Step != 3 {
		t.Fatalf("decode(%s) = %+v, %v", body, it, err)
	}
	if got := string(encodeWorkItem(workItem{V: 1, RunID: "r", Gen: 1, Step: 0})); got != `{"v":1,"run_id":"r","gen":1,"step":0}` {
		t.Fatalf("item without trace = %s; want the old encoding", got)
	}
}
