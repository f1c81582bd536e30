package funchost

import (
	"net/http"
	"reflect"
	"testing"
)

func TestReadCanonicalHeaders_JoinsAndReplacesAsRequestDoes(t *testing.T) {
	t.Parallel()
	e, err := newHTTPEntry("f", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, headers string
		want          http.Header
	}{
		{"plain", `{"Content-Type":["application/json"],"content-length":"17","x-custom":"v"}`,
			http.Header{"Content-Type": {"application/json"}, "Content-Length": {"17"}, "X-Custom": {"v"}}},
		{"repeated", `{"X-A":["1"],"x-a":"2","X-A":["3","4"],"Y":"5","y":null,"Y":null,"Z":[]}`,
			http.Header{"X-A": {"2", "3", "4"}}},
		{"other values as text", `{"N":12,"O":{"a":1}}`, http.Header{"N": {"12"}, "O": {`{"a":1}`}}},
		{"escaped", `{"A":"\u00e9\n","B":["x","y"]}`, http.Header{"A": {"é\n"}, "B": {"x", "y"}}},
		{"empty", `{}`, http.Header{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := []byte(`{"Data":{"req":{"Method":"GET","Headers":` + c.headers + `}}}`)
			var scratch hotScratch
			trig, err := decodeHTTPInvocationBody(data, "req", &scratch)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(trig.header, c.want) || trig.Headers != nil {
				t.Fatalf("header = %#v (Headers %v), want %#v", trig.header, trig.Headers, c.want)
			}
			hr, err := trig.request(t.Context(), "", "api", e)
			if err != nil || !reflect.DeepEqual(hr.Header, c.want) {
				t.Fatalf("request header = %#v, %v; want %#v", hr.Header, err, c.want)
			}
		})
	}
}
