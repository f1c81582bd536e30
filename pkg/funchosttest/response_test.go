package funchosttest_test

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/funchosttest"
)

// raw answers every invocation with this status, content type and body.
func raw(status int, contentType, body string) *recorder {
	return &recorder{respond: func(w http.ResponseWriter, _ *http.Request, _ invocation) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}}
}

// How the host turns the handler's answer into the caller's response.
func TestEmulator_Response_InterpretedLikeTheHost(t *testing.T) {
	const js = "application/json"
	cases := []struct {
		name       string
		handler    *recorder
		fn         string
		wantStatus int
		wantType   []string // nil: no Content-Type header at all
		wantHeader map[string]string
		wantBody   string
	}{
		{name: "text body with content type gets a charset", handler: raw(200, js, `{"Outputs":{"res":{"statusCode":201,"headers":{"Content-Type":"text/plain","X-A":"b"},"body":"made"}}}`),
			wantStatus: 201, wantType: []string{"text/plain; charset=utf-8"}, wantHeader: map[string]string{"X-A": "b"}, wantBody: "made"},
		{name: "text body keeps its charset", handler: raw(200, js, `{"Outputs":{"res":{"headers":{"Content-Type":"application/json; charset=utf-8"},"body":"{}"}}}`),
			wantStatus: 200, wantType: []string{"application/json; charset=utf-8"}, wantBody: "{}"},
		{name: "+json reply media type", handler: raw(200, "application/vnd.api+json", `{"Outputs":{"res":{"body":"x"}}}`), wantStatus: 500},
		{name: "text/json reply media type", handler: raw(200, "text/json", `{"Outputs":{"res":{"body":"x"}}}`), wantStatus: 200, wantType: []string{"text/plain; charset=utf-8"}, wantBody: "x"},
		{name: "handler non-2xx", handler: raw(500, js, `{"Outputs":{"res":{"statusCode":200,"body":"x"}}}`), wantStatus: 500},
		{name: "handler 404", handler: raw(404, js, `{}`), wantStatus: 500},
		{name: "unparsable body", handler: raw(200, js, `{"Outputs":`), wantStatus: 500},
		{name: "text/plain media type", handler: raw(200, "text/plain", `{"Outputs":{"res":{"statusCode":200,"body":"x"}}}`), wantStatus: 500},
		{name: "no media type", handler: raw(200, "", `{"Outputs":{"res":{"statusCode":200,"body":"x"}}}`), wantStatus: 500},
		{name: "missing res", handler: raw(200, js, `{"Outputs":{},"Logs":[],"ReturnValue":null}`), wantStatus: 200, wantBody: "{}"},
		{name: "null res fails", handler: raw(200, js, `{"Outputs":{"res":null}}`), wantStatus: 500},
		{name: "string res fails", handler: raw(200, js, `{"Outputs":{"res":"hello"}}`), wantStatus: 500},
		{name: "204 empty", handler: raw(200, js, `{"Outputs":{"res":{"statusCode":204}}}`), wantStatus: 204},
		{name: "default status 200, text/plain", handler: raw(200, js, `{"Outputs":{"res":{"body":"hi"}}}`), wantStatus: 200, wantType: []string{"text/plain; charset=utf-8"}, wantBody: "hi"},
		{name: "case-insensitive property names", handler: raw(200, js, `{"outputs":{"res":{"StatusCode":202,"BODY":"ok","HEADERS":{"content-type":"text/csv"}}}}`),
			wantStatus: 202, wantType: []string{"text/csv; charset=utf-8"}, wantBody: "ok"},
		{name: "case-sensitive binding name", handler: raw(200, js, `{"Outputs":{"RES":{"statusCode":202,"body":"ok"}}}`), wantStatus: 200, wantBody: "{}"},
		{name: "status is not read", handler: raw(200, js, `{"Outputs":{"res":{"status":"418","body":"teapot"}}}`), wantStatus: 200, wantType: []string{"text/plain; charset=utf-8"}, wantBody: "teapot"},
		{name: "statusCode as numeric string", handler: raw(200, js, `{"Outputs":{"res":{"statusCode":"418","body":"teapot"}}}`), wantStatus: 418, wantType: []string{"text/plain; charset=utf-8"}, wantBody: "teapot"},
		{name: "non-numeric status is 200", handler: raw(200, js, `{"Outputs":{"res":{"statusCode":"lots"}}}`), wantStatus: 200},
		{name: "out-of-range status fails", handler: raw(200, js, `{"Outputs":{"res":{"statusCode":1000}}}`), wantStatus: 500},
		{name: "null content-type throws", handler: raw(200, js, `{"Outputs":{"res":{"headers":{"Content-Type":null},"body":"x"}}}`), wantStatus: 500},
		{name: "object body is indented JSON without content type", handler: raw(200, js, `{"Outputs":{"res":{"statusCode":200,"body":{"a":[1,2]}}}}`),
			wantStatus: 200, wantBody: "{\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{name: "scalar headers in their .NET form", handler: raw(200, js, `{"Outputs":{"res":{"headers":{"X-Num":5,"X-Bool":true,"X-Empty":[]},"body":"x"}}}`),
			wantStatus: 200, wantType: []string{"text/plain; charset=utf-8"}, wantHeader: map[string]string{"X-Num": "5", "X-Bool": "True", "X-Empty": "[]"}, wantBody: "x"},
		{name: "array header is multi-line JSON text: 500", handler: raw(200, js, `{"Outputs":{"res":{"headers":{"X-Many":["a","b"]},"body":"x"}}}`), wantStatus: 500},
		{name: "null header fails", handler: raw(200, js, `{"Outputs":{"res":{"headers":{"X-A":null},"body":"x"}}}`), wantStatus: 500},
		{name: "no base64 decoding on http output", handler: raw(200, js, `{"Outputs":{"res":{"body":"dGVzdA=="}}}`), wantStatus: 200, wantType: []string{"text/plain; charset=utf-8"}, wantBody: "dGVzdA=="},
		{name: "$return binding reads ReturnValue", fn: "ret", handler: raw(200, js, `{"Outputs":{"res":{"body":"wrong"}},"ReturnValue":{"statusCode":203,"body":"from return"}}`),
			wantStatus: 203, wantType: []string{"text/plain; charset=utf-8"}, wantBody: "from return"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeApp(t, "", map[string]string{
				"fn":  httpFunc("anonymous", "fn"),
				"ret": `{"bindings":[{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"ret"},{"type":"http","direction":"out","name":"$return"}]}`,
			})
			e := start(t, root, tc.handler, funchosttest.Options{})
			fn := tc.fn
			if fn == "" {
				fn = "fn"
			}
			status, hdr, body := do(t, "GET", e.URL()+"/api/"+fn, nil, nil)
			if status != tc.wantStatus {
				t.Fatalf("status = %d, want %d (body %q)", status, tc.wantStatus, body)
			}
			if body != tc.wantBody {
				t.Errorf("body = %q, want %q", body, tc.wantBody)
			}
			if got := hdr.Values("Content-Type"); !reflect.DeepEqual(got, tc.wantType) {
				t.Errorf("Content-Type = %q, want %q", got, tc.wantType)
			}
			for k, v := range tc.wantHeader {
				if got := hdr.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

// The base64-decode quirk of non-http outputs, and queue output shapes.
func TestEmulator_QueueOutput_Base64QuirkAndShapes(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		name     string
		dataType string
		value    string // JSON of Outputs.out
		want     []string
	}{
		{"plain string kept", "", `"hello world"`, []string{b64("hello world")}},
		{"base64-looking string is decoded (corrupted)", "", `"test"`, []string{"test"}}, // stored base64(decode("test")) == "test": the consumer gets 3 garbage bytes
		{"base64 string decoded to its content", "", `"` + b64("real") + `"`, []string{b64("real")}},
		{"binary dataType is not decoded", "binary", `"test"`, []string{b64("test")}},
		{"array is several messages", "", `["hello world", {"k": 1}, null]`, []string{b64("hello world"), b64(`{"k":1}`)}},
		{"base64 with white space is decoded as .NET does", "", `"dG Vz\tdA\r\n=="`, []string{b64("test")}},
		{"object is its JSON", "", `{"k": [1, 2]}`, []string{b64(`{"k":[1,2]}`)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := writeApp(t, "", map[string]string{"fn": `{"bindings":[
				{"type":"httpTrigger","direction":"in","name":"req","authLevel":"anonymous","route":"fn"},
				{"type":"http","direction":"out","name":"res"},
				{"type":"queue","direction":"out","name":"out","queueName":"Out-Q","dataType":"` + tc.dataType + `"}]}`})
			e := start(t, root, raw(200, "application/json", `{"Outputs":{"res":{"body":"ok"},"out":`+tc.value+`}}`), funchosttest.Options{})
			if status, _, body := do(t, "GET", e.URL()+"/api/fn", nil, nil); status != 200 || body != "ok" {
				t.Fatalf("got %d %q", status, body)
			}
			if got := e.Queue("out-q"); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("queue = %q, want %q", got, tc.want)
			}
		})
	}
}
