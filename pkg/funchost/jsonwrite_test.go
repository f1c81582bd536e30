package funchost

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

func TestAppendJSONString_RoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s`, "ctl\x00\x1f\n\r\t", "é😀", "bad\xffutf8", "\u2028\u2029", "<&>"} {
		enc := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, enc, err)
		}
		want := string(bytes.ToValidUTF8([]byte(s), []byte("\ufffd")))
		if back != want {
			t.Fatalf("round trip of %q = %q, want %q", s, back, want)
		}
	}
}

func TestAppendHTTPEnvelope_MatchesEncodingJSON(t *testing.T) {
	res := wireHTTPOutput{StatusCode: 404, Headers: map[string]string{"B": "2, 3", "A": "x\"y"}, Body: `{"error":"é"}`}
	fast := appendHTTPEnvelope(nil, 404, http.Header{"B": {"2", "3"}, "A": {"x\"y"}, "Empty": {}}, []byte(res.Body))
	var a, b any
	if err := json.Unmarshal(fast, &a); err != nil {
		t.Fatal(err)
	}
	slow, _ := json.Marshal(invocationResponse{Outputs: map[string]any{"res": res}, Logs: []string{}})
	_ = json.Unmarshal(slow, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("fast %s\nslow %s", fast, slow)
	}
}
