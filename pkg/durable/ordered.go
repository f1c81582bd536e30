package durable

import (
	"bytes"
	"encoding/json"
)

// Member is one key and value of an OrderedObject.
type Member struct {
	Key   string
	Value any
}

// OrderedObject is a JSON object that keeps its members' order.
type OrderedObject []Member

// MarshalJSON writes the members in order.
func (o OrderedObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
