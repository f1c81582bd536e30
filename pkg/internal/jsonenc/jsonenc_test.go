package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
)

func TestAppend_AsEncodingJSONWithoutHTMLEscapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"html kept", map[string]string{"q": "<a & b>"}, `{"q":"<a & b>"}`},
		{"struct order", struct {
			B int `json:"b"`
			A int `json:"a"`
		}{1, 2}, `{"b":1,"a":2}`},
		{"non-ASCII raw", "é", `"é"`},
		{"raw message", json.RawMessage(`{"x": 1}`), `{"x":1}`},
	}
	for _, tt := range tests {
		got, err := jsonenc.Append([]byte("prefix:"), tt.v)
		if err != nil || string(got) != "prefix:"+tt.want {
			t.Errorf("%s: Append = %q, %v; want %q", tt.name, got, err, "prefix:"+tt.want)
		}
	}
}

func TestAppend_ErrorLeavesDstAlone(t *testing.T) {
	t.Parallel()
	dst := []byte("keep")
	got, err := jsonenc.Append(dst, map[string]any{"f": func() {}})
	var ue *json.UnsupportedTypeError
	if !errors.As(err, &ue) || !bytes.Equal(got, dst) {
		t.Fatalf("Append = %q, %v; want %q and an UnsupportedTypeError", got, err, dst)
	}
}

func ExampleAppend() {
	out, _ := jsonenc.Append(nil, map[string]string{"html": "<b>"})
	fmt.Println(string(out))
	// Output: {"html":"<b>"}
}
