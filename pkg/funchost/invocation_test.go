package funchost

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func loadInvocation(t *testing.T, name string) *invocationRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "invocations", name))
	if err != nil {
		t.Fatal(err)
	}
	var req invocationRequest
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatalf("unmarshal %s: %v", name, err)
	}
	return &req
}

func strp(s string) *string { return &s }

func TestDecodeHTTPTrigger_Goldens(t *testing.T) {
	tests := []struct {
		file       string
		method     string
		query      map[string]string
		header     string
		headerVals []string
		params     map[string]*string
		body       []byte
	}{
		{file: "http_post_json.json", method: "POST", query: map[string]string{"code": "abc", "x": "1"},
			header: "X-Multi", headerVals: []string{"a", "b"}, params: map[string]*string{}, body: []byte(`{"input":{"a":1}}`)},
		{file: "http_get_nobody.json", method: "GET", query: nil, header: "User-Agent", headerVals: []string{"curl/8.0"},
			params: map[string]*string{"instance_id": strp("r1"), "opt": nil}, body: nil},
		{file: "http_query_string.json", method: "GET", query: map[string]string{"tag": "a,b", "page": "2"},
			header: "Accept", headerVals: []string{"text/plain"}, params: map[string]*string{}, body: nil},
		{file: "http_octet_stream.json", method: "POST", query: map[string]string{}, header: "Content-Type",
			headerVals: []string{"application/octet-stream"}, params: map[string]*string{}, body: []byte{0, 1, 0xfe, 0xff}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			req := loadInvocation(t, tc.file)
			trig, err := decodeHTTPTrigger(req.Data["req"])
			if err != nil {
				t.Fatalf("DecodeHTTPTrigger: %v", err)
			}
			if trig.Method != tc.method {
				t.Errorf("Method = %q, want %q", trig.Method, tc.method)
			}
			if len(trig.Query) != len(tc.query) {
				t.Errorf("Query = %v, want %v", trig.Query, tc.query)
			}
			for k, v := range tc.query {
				if trig.Query[k] != v {
					t.Errorf("Query[%q] = %q, want %q", k, trig.Query[k], v)
				}
			}
			if got := trig.Headers[tc.header]; !equalStrings(got, tc.headerVals) {
				t.Errorf("Headers[%q] = %v, want %v", tc.header, got, tc.headerVals)
			}
			for k, want := range tc.params {
				got, ok := trig.Params[k]
				if !ok || (got == nil) != (want == nil) || (got != nil && *got != *want) {
					t.Errorf("Params[%q] = %v (present %v), want %v", k, got, ok, want)
				}
			}
			if !bytes.Equal(trig.Body, tc.body) || (trig.Body == nil) != (tc.body == nil) {
				t.Errorf("Body = %q, want %q", trig.Body, tc.body)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecodeHTTPTrigger_Malformed(t *testing.T) {
	tests := map[string]string{
		"not an object":   `[1,2]`,
		"no method":       `{"Url":"http://x/"}`,
		"query not obj":   `{"Method":"GET","Query":[1]}`,
		"query str bad":   `{"Method":"GET","Query":"not json"}`,
		"header bad":      `{"Method":"GET","Headers":{"A":[1]}}`,
		"bad base64 body": `{"Method":"POST","Headers":{"Content-Type":["application/octet-stream"]},"Body":"!!"}`,
	}
	for name, raw := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeHTTPTrigger(json.RawMessage(raw)); !errors.Is(err, errBadInvocation) {
				t.Fatalf("err = %v, want ErrBadInvocation", err)
			}
		})
	}
}

func TestDecodeQueueMessage_DoubleEncodedGolden(t *testing.T) {
	req := loadInvocation(t, "queue_double_encoded.json")
	msg, err := decodeQueueMessage(req, "msg")
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Body) != "hello" {
		t.Errorf("Body = %q, want hello", msg.Body)
	}
	if msg.DequeueCount != 2 || msg.ID != "8ad4b1e3-2bd5-4c9a-9b4f-1c7d2a0e5f11" || msg.PopReceipt != "AgAAAAMAAAAAAAAA" {
		t.Errorf("metadata = %+v", msg)
	}
	if want := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC); !msg.InsertionTime.Equal(want) {
		t.Errorf("InsertionTime = %v, want %v", msg.InsertionTime, want)
	}
}

func TestDecodeStringTrigger_Tolerant(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`"\"hello\""`, `hello`},                  // double-encoded, as the host sends it
		{`"hello"`, `hello`},                      // single-encoded, as the docs show it
		{`"{\"a\":1}"`, `{"a":1}`},                // JSON text encoded once
		{`"\"{\\\"a\\\":1}\""`, `{"a":1}`},        // JSON text encoded twice
		{`{"a":1}`, `{"a":1}`},                    // object value
		{`"\"unterminated"`, `"unterminated`},     // not a JSON string inside: keep
		{`"\"\\u00e9t\u00e9\""`, "\u00e9t\u00e9"}, // escapes inside
		{`"  \"padded\"  "`, `padded`},            // whitespace around the inner string
	}
	for _, tc := range tests {
		got, err := decodeStringTrigger(json.RawMessage(tc.raw))
		if err != nil {
			t.Errorf("DecodeStringTrigger(%s): %v", tc.raw, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("DecodeStringTrigger(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
	if _, err := decodeStringTrigger(json.RawMessage(`null`)); !errors.Is(err, errBadInvocation) {
		t.Errorf("null: err = %v, want ErrBadInvocation", err)
	}
}

func TestDecodeTimerInfo_Golden(t *testing.T) {
	info, err := decodeTimerInfo(loadInvocation(t, "timer.json"), "timer")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Schedule.AdjustForDST || info.IsPastDue || info.ScheduleStatus == nil {
		t.Fatalf("info = %+v", info)
	}
	if want := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC); !info.ScheduleStatus.Next.Equal(want) {
		t.Errorf("Next = %v, want %v", info.ScheduleStatus.Next, want)
	}
	if _, err := decodeTimerInfo(&invocationRequest{Data: map[string]json.RawMessage{}}, "timer"); !errors.Is(err, errBadInvocation) {
		t.Errorf("missing binding: err = %v", err)
	}
}

// FuzzDecodeInvocation feeds arbitrary payloads through every decoder: none may panic, and an
// accepted HTTP trigger must rebuild into a request.
func FuzzDecodeInvocation(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "invocations"))
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("testdata", "invocations", e.Name()))
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"Data":{"req":{"Method":"GET","Query":"\"{}\""}}}`))
	f.Add([]byte(`{"Data":{"msg":"\"\\\"x\\\"\""}}`))
	e, err := newHTTPEntry("f", "items/{id?}", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var req invocationRequest
		if json.Unmarshal(data, &req) != nil {
			return
		}
		if raw, ok := req.Data["req"]; ok {
			if trig, err := decodeHTTPTrigger(raw); err == nil {
				if _, err := trig.request(t.Context(), "", "api", e); err != nil && !errors.Is(err, errBadInvocation) {
					t.Fatalf("request: unexpected error class: %v", err)
				}
			} else if !errors.Is(err, errBadInvocation) {
				t.Fatalf("DecodeHTTPTrigger: unexpected error class: %v", err)
			}
		}
		_, _ = decodeQueueMessage(&req, "msg")
		_, _ = decodeTimerInfo(&req, "timer")
	})
}

func TestIsBinaryMediaType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/octet-stream": true, "Application/Octet-Stream; q=1": true, " multipart/form-data; boundary=x": true,
		"MULTIPART/mixed": true, "application/json": false, "text/plain; charset=utf-8": false, "": false, "multipart/": false,
	} {
		if got := isBinaryMediaType(ct); got != want {
			t.Errorf("isBinaryMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
}
