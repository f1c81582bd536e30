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
	f.Add(encodeWorkItem(workItem{V: 1, RunID: "r", Gen: 1, Step: 3, Nonce: "n", Retry: 1, Cancel: "001767225600000-0a1b2c3d4e5f"}))
	f.Add([]byte(`{"v":1,"run_id":"r","gen":1,"step":2,"cx":"001767225600000-0a1b2c3d4e5f","br":0,"bn":"a"}`))
	f.Add([]byte(`{"v":1,"run_id":"r","gen":1,"step":2,"cx":"not a key"}`))
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

// The item of a cancel's intent names its due row; a key of another form, or a branch's item
// that names one, is no work item.
func TestDecodeWorkItem_CancelItem(t *testing.T) {
	const key = "001767225600000-0a1b2c3d4e5f"
	want := workItem{V: 1, RunID: "r", Gen: 1, Step: 3, Nonce: "n", Cancel: key}
	for _, body := range [][]byte{encodeWorkItem(want), []byte(`{"cx":"` + key + `","v":1,"run_id":"r","gen":1,"step":3,"nonce":"n"}`)} {
		if it, br, err := decodeWorkItem(body); err != nil || br != nil || it != want {
			t.Fatalf("decode(%s) = %+v %v %v, want %+v", body, it, br, err, want)
		}
	}
	for _, body := range []string{
		`{"v":1,"run_id":"r","gen":1,"step":3,"cx":"stop"}`,
		`{"v":1,"run_id":"r","gen":1,"step":3,"cx":"001767225600000-0A1B"}`,
		`{"v":1,"run_id":"r","gen":1,"step":3,"cx":"` + key + `","br":0,"bn":"a"}`,
	} {
		if _, _, err := decodeWorkItem([]byte(body)); err == nil {
			t.Errorf("decode(%s) accepted", body)
		}
	}
}
