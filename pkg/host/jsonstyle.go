package host

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/funcgraph/funcgraph/pkg/internal/jsonenc"
	"github.com/funcgraph/funcgraph/pkg/pyjson"
)

// The contract writes two JSON styles, both from encoding/json output:
//
//   - compact: `{"a":1}`, non-ASCII raw, no HTML escaping (invoke, errors, health);
//   - Python json.dumps default: separators ", " and ": ", every non-ASCII character as a
//     lowercase \uXXXX escape (thread state, SSE data payloads), written by package pyjson.
//
// Go values keep encoding/json's key order
// (struct field order; sorted map keys) and json.RawMessage keeps the caller's order.

// appendCompact appends the compact encoding of v to dst.
func appendCompact(dst []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, raw); err != nil {
			return dst, fmt.Errorf("compact raw JSON: %w", err)
		}
		return buf.Bytes(), nil
	}
	out, err := jsonenc.Append(dst, v)
	if err != nil {
		return dst, fmt.Errorf("encode JSON: %w", err)
	}
	return out, nil
}

// marshalCompact returns the compact encoding of v.
func marshalCompact(v any) ([]byte, error) { return appendCompact(nil, v) }

// marshalDumps returns the json.dumps-style encoding of v (see package pyjson).
func marshalDumps(v any) ([]byte, error) { return pyjson.Marshal(v) }

// pyRepr quotes s like Python's repr of a str (see pyjson.Repr).
func pyRepr(s string) string { return pyjson.Repr(s) }

// isJSONObject reports whether the encoded value is a JSON object.
func isJSONObject(encoded []byte) bool {
	encoded = bytes.TrimLeft(encoded, " \t\r\n")
	return len(encoded) > 0 && encoded[0] == '{'
}
