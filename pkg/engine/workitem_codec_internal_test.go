package engine

import "testing"

// FuzzDecodeWorkItem: a queue body decodes to a run's or a branch's work item or is refused,
// never anything else; what it decodes to is written again by the encoder of its kind and
// read back the same, so a redelivered or rescued message keeps its meaning.
func FuzzDecodeWorkItem(f *testing.F) {
	f.Add([]byte(`{"v":1,"run_id":"r","gen":1,"step":0}`))
	f.Add(encodeWorkItem(workItem{V: 1, RunID: "run 1", Gen: 2, Step: 3, Nonce: "n", Retry: 4, Trace: "00-4bf9-01 k=v", VersionWaits: 5}))
	f.Add(encodeBranchWork(branchWork{workItem: workItem{V: 1, RunID: "r", Gen: 1, Step: 2, Nonce: "n"}, Index: 3, Attempt: 1, Node: "search", Item: `{"q":"x"}`, Resent: true}))
	f.Add([]byte(`{"v":1,"run_id":"r","gen":1,"step":0,"br":0,"bn":"a"}`))
	f.Add([]byte(`{"v":1,"run_id":"r","gen":1,"step":2,"nonce":"n","br":3,"ba":1,"bn":"search","bi":{"q":"x"},"bs":1}`))
	f.Add([]byte(`eyJ2IjoxLCJydW5faWQiOiJyIiwiZ2VuIjoxLCJzdGVwIjowfQ==`))
	f.Add([]byte(`{"v":1,"run_id":"r","gen":1,"step":0,"ba":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		it, br, err := decodeWorkItem(body)
		if err != nil {
			return
		}
		var again []byte
		if br != nil {
			if br.workItem != it {
				t.Fatalf("decode(%q): branch run part %+v, item %+v", body, br.workItem, it)
			}
			again = encodeBranchWork(*br)
		} else {
			again = encodeWorkItem(it)
		}
		it2, br2, err := decodeWorkItem(again)
		if err != nil || it2 != it || (br == nil) != (br2 == nil) || (br != nil && *br2 != *br) {
			t.Fatalf("decode(%q) = %+v %+v; encoded %s, decoded again %+v %+v (%v)", body, it, br, again, it2, br2, err)
		}
	})
}
