package jsonenc

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxPooled is the largest buffer an encoder goes back to the pool with.
const maxPooled = 1 << 20

type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var pool = sync.Pool{New: func() any {
	e := new(encoder)
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}

// Append appends the encoding of v to dst. On error dst is returned unchanged with
// encoding/json's error.
func Append(dst []byte, v any) ([]byte, error) {
	e := pool.Get().(*encoder)
	defer func() {
		if e.buf.Cap() <= maxPooled {
			e.buf.Reset()
			pool.Put(e)
		}
	}()
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		return dst, err
	}
	out := e.buf.Bytes()
	return append(dst, out[:len(out)-1]...), nil // Encode ends with a newline
}
