package memory

import "hash/maphash"

// codec encodes and decodes the rows of one Store (props.go has the format). Guarded by its
// lockedCodec's mu.
type codec struct {
	names  nameTable
	dict   dict
	fields []field // scratch
	sorted []field // scratch of sortFields
	buf    []byte  // scratch
	recent [32]string
	hashes [32]uint64 // of recent, compared first
	seed   maphash.Seed
	next   int // the slot of recent written next
}

// encode returns the row key rk followed by the encoding of m.
func (c *codec) encode(rk string, m map[string]any) string {
	c.fields = c.names.fields(c.fields, &c.sorted, m)
	b := append(c.buf[:0], rk...)
	for _, f := range c.fields {
		b = c.appendField(b, f)
	}
	clear(c.fields) // hold no caller values
	return c.done(b)
}

// merge returns the row key rk followed by enc with the properties of m set (added or
// replaced).
func (c *codec) merge(rk, enc string, m map[string]any) string {
	c.fields = c.names.fields(c.fields, &c.sorted, m)
	b := append(c.buf[:0], rk...)
	var e entry
	have := enc != ""
	if have {
		e, enc = next(enc)
	}
	for _, f := range c.fields {
		for have {
			cmp := cmpField(e.id, e.inline, f.id, f.name)
			if cmp > 0 {
				break
			}
			if cmp < 0 {
				b = append(b, e.whole...)
			}
			if have = enc != ""; have {
				e, enc = next(enc)
			}
			if cmp == 0 {
				break
			}
		}
		b = c.appendField(b, f)
	}
	if have {
		b = append(append(b, e.whole...), enc...)
	}
	clear(c.fields)
	return c.done(b)
}

// maxSharedRow bounds the rows done looks for among the last ones written: index rows are
// a few hundred bytes.
const maxSharedRow = 512

// done returns the new row b as a string of its own, or one of the last ones written when it
// equals it (the engine writes a run's index rows, with one row key, in four partitions).
func (c *codec) done(b []byte) string {
	c.buf = b
	if len(b) > maxSharedRow { // a head, a history row: unique, not worth hashing
		s := string(b)
		if cap(c.buf) > 1<<16 { // do not keep a large row's buffer
			c.buf = nil
		}
		return s
	}
	if c.seed == (maphash.Seed{}) {
		c.seed = maphash.MakeSeed()
	}
	h := maphash.Bytes(c.seed, b)
	for i, s := range c.recent {
		if c.hashes[i] == h && s == string(b) { // no allocation
			return s
		}
	}
	s := string(b)
	if cap(c.buf) > 1<<16 { // do not keep a large row's buffer
		c.buf = nil
	}
	c.recent[c.next], c.hashes[c.next] = s, h
	c.next = (c.next + 1) % len(c.recent)
	return s
}

// toMap decodes enc into a new map.
func (c *codec) toMap(enc string) map[string]any {
	n := 0
	for s := enc; s != ""; n++ {
		_, s = next(s)
	}
	m := make(map[string]any, n)
	for enc != "" {
		var e entry
		e, enc = next(enc)
		m[c.names.name(e.id, e.inline)] = c.value(e)
	}
	return m
}

// get returns the value of the property name in enc.
func (c *codec) get(enc, name string) (any, bool) {
	id, ok := c.names.lookup(name)
	if !ok {
		id = 0
	}
	for enc != "" {
		var e entry
		e, enc = next(enc)
		switch cmpField(e.id, e.inline, id, name) {
		case 0:
			return c.value(e), true
		case 1:
			return nil, false
		}
	}
	return nil, false
}
