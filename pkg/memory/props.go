package memory

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// A stored row's properties are encoded in one immutable string (enc): per property, in
// ascending name order, its name, a type tag and its value. It is what a store holding many
// waiting runs (a head, its history, its index rows) is made of, so it is compact: a name is
// an id of the store's name table (names repeat on every row), an integer a varint, a time
// its seconds and nanoseconds. A decoded string is a substring of enc (no copy): enc is
// never changed, only replaced. Rows that the engine writes with the same properties (the
// index rows of one run) share one enc.
//
// Entry: uvarint name id (0: an inline name follows, uvarint length and bytes), tag, value.

// Type tags.
const (
	tagString byte = iota + 1 // uvarint length, bytes
	tagBytes                  // uvarint length, bytes
	tagFalse
	tagTrue
	tagInt32   // zigzag varint
	tagInt64   // zigzag varint
	tagFloat64 // 8 bytes, little endian
	tagTime    // zigzag varint Unix seconds, uvarint nanoseconds; read back in UTC
	tagDict    // uvarint index of the store's dictionary of frequent strings (dict.go)
)

// maxNames bounds a store's name table; names past it are stored inline in each row.
const maxNames = 1 << 16

// nameTable interns property names: id i names list[i-1]. Guarded by its lockedCodec's mu.
type nameTable struct {
	ids  map[string]uint32
	list []string
	// recent caches ids by a cheap slot of their name (length, first and last byte): the
	// engine writes the same few dozen names all the time.
	recent [64]struct {
		name string
		id   uint32
	}
}

// id returns the id of name, adding it; 0 when the table is full (the name goes inline).
func (t *nameTable) id(name string) uint32 {
	var slot *struct {
		name string
		id   uint32
	}
	if name != "" {
		slot = &t.recent[(uint(len(name))*31+uint(name[0])+7*uint(name[len(name)-1]))%uint(len(t.recent))]
		if slot.name == name {
			return slot.id
		}
	}
	if id, ok := t.ids[name]; ok {
		if slot != nil {
			slot.name, slot.id = t.list[id-1], id
		}
		return id
	}
	if len(t.list) >= maxNames {
		return 0
	}
	if t.ids == nil {
		t.ids = map[string]uint32{}
	}
	name = strings.Clone(name) // never hold the caller's memory
	t.list = append(t.list, name)
	t.ids[name] = uint32(len(t.list))
	return uint32(len(t.list))
}

// lookup returns the id of name without adding it; ok is false when the table has none.
func (t *nameTable) lookup(name string) (uint32, bool) {
	id, ok := t.ids[name]
	return id, ok
}

func (t *nameTable) name(id uint32, inline string) string {
	if id == 0 {
		return inline
	}
	return t.list[id-1]
}

// field is one property to encode.
type field struct {
	id   uint32
	name string // set when id is 0
	val  any
}

// cmpField orders entries: by id, inline names (id 0) first and by name.
func cmpField(aID uint32, aName string, bID uint32, bName string) int {
	if c := cmp.Compare(aID, bID); c != 0 || aID != 0 {
		return c
	}
	return strings.Compare(aName, bName)
}

// fields returns m's properties with their ids, in entry order, in buf.
func (t *nameTable) fields(buf []field, scratch *[]field, m map[string]any) []field {
	buf = buf[:0]
	for k, v := range m {
		f := field{id: t.id(k), val: v}
		if f.id == 0 {
			f.name = k
		}
		buf = append(buf, f)
	}
	sortFields(buf, scratch)
	return buf
}

// sortFields sorts fs in entry order. When every id is below 256 (a store's first 255
// names: all of the engine's), the ids are marked in a bitmap and read back in order: no
// comparisons. Otherwise the fields of a row with no inline name sort as integers, id and
// position in one. The fields themselves are moved once.
func sortFields(fs []field, scratch *[]field) {
	var set [4]uint64
	var at [256]uint8 // position of the field of each id in set
	small := len(fs) <= len(at)
	for i, f := range fs {
		if f.id == 0 || f.id >= uint32(len(at)) {
			small = false
			break
		}
		set[f.id>>6] |= 1 << (f.id & 63)
		at[f.id] = uint8(i)
	}
	if small {
		tmp := append((*scratch)[:0], fs...)
		n := 0
		for w, word := range set {
			for ; word != 0; word &= word - 1 {
				fs[n] = tmp[at[w<<6|bits.TrailingZeros64(word)]]
				n++
			}
		}
		clear(tmp) // hold no caller values
		*scratch = tmp
		return
	}
	var keys [maxSortKeys]uint64
	if len(fs) > len(keys) {
		slices.SortFunc(fs, func(a, b field) int { return cmpField(a.id, a.name, b.id, b.name) })
		return
	}
	for i, f := range fs {
		if f.id == 0 {
			slices.SortFunc(fs, func(a, b field) int { return cmpField(a.id, a.name, b.id, b.name) })
			return
		}
		keys[i] = uint64(f.id)<<8 | uint64(i)
	}
	ks := keys[:len(fs)]
	slices.Sort(ks)
	tmp := append((*scratch)[:0], fs...)
	for i, k := range ks {
		fs[i] = tmp[k&0xff]
	}
	clear(tmp) // hold no caller values
	*scratch = tmp
}

// maxSortKeys bounds the rows sortFields sorts as integers (a position fits in a byte).
const maxSortKeys = 256

func (c *codec) appendField(b []byte, f field) []byte {
	b = binary.AppendUvarint(b, uint64(f.id))
	if f.id == 0 {
		b = appendStr(b, f.name)
	}
	switch v := f.val.(type) {
	case string:
		if i, ok := c.dict.index(v); ok {
			return binary.AppendUvarint(append(b, tagDict), uint64(i))
		}
		return appendStr(append(b, tagString), v)
	case []byte:
		b = binary.AppendUvarint(append(b, tagBytes), uint64(len(v)))
		return append(b, v...)
	case bool:
		if v {
			return append(b, tagTrue)
		}
		return append(b, tagFalse)
	case int32:
		return binary.AppendVarint(append(b, tagInt32), int64(v))
	case int64:
		return binary.AppendVarint(append(b, tagInt64), v)
	case float64:
		return binary.LittleEndian.AppendUint64(append(b, tagFloat64), math.Float64bits(v))
	case time.Time:
		b = binary.AppendVarint(append(b, tagTime), v.Unix())
		return binary.AppendUvarint(b, uint64(v.Nanosecond()))
	}
	// engine.ValidateBatch admits no other type before a row is encoded.
	panic("memory: encode property of unsupported type")
}

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// entry is one decoded entry of an enc: its name and the encoding of its value.
type entry struct {
	id     uint32
	inline string // the name when id is 0
	tag    byte
	raw    string // the value's encoding, after the tag
	whole  string // the entry's encoding
}

// next decodes the entry at the start of enc and returns the rest.
func next(enc string) (entry, string) {
	var e entry
	id, n := uvarint(enc)
	e.id = uint32(id)
	rest := enc[n:]
	if e.id == 0 {
		l, n := uvarint(rest)
		e.inline, rest = rest[n:n+int(l)], rest[n+int(l):]
	}
	e.tag, rest = rest[0], rest[1:]
	n = 0
	switch e.tag {
	case tagString, tagBytes:
		l, m := uvarint(rest)
		n = m + int(l)
	case tagInt32, tagInt64, tagDict:
		n = varintLen(rest)
	case tagFloat64:
		n = 8
	case tagTime:
		n = varintLen(rest)
		n += varintLen(rest[n:])
	}
	e.raw, rest = rest[:n], rest[n:]
	e.whole = enc[:len(enc)-len(rest)]
	return e, rest
}

// value decodes the entry's value; a string is a substring of the enc or of the dictionary,
// bytes a copy.
func (c *codec) value(e entry) any { return decodeValue(e, c.dict.boxed) }

// decodeValue is codec.value with the dictionary's boxed strings in boxed: a snapshot taken
// under its codec's lock may be read after it is released (the dictionary only appends).
func decodeValue(e entry, boxed []any) any {
	switch e.tag {
	case tagDict:
		i, _ := uvarint(e.raw)
		return boxed[i]
	case tagString:
		_, n := uvarint(e.raw)
		return e.raw[n:]
	case tagBytes:
		_, n := uvarint(e.raw)
		return []byte(e.raw[n:])
	case tagFalse:
		return false
	case tagTrue:
		return true
	case tagInt32:
		v, _ := varint(e.raw)
		return int32(v)
	case tagInt64:
		v, _ := varint(e.raw)
		return v
	case tagFloat64:
		return math.Float64frombits(uint64(e.raw[0]) | uint64(e.raw[1])<<8 | uint64(e.raw[2])<<16 | uint64(e.raw[3])<<24 |
			uint64(e.raw[4])<<32 | uint64(e.raw[5])<<40 | uint64(e.raw[6])<<48 | uint64(e.raw[7])<<56)
	case tagTime:
		sec, n := varint(e.raw)
		ns, _ := uvarint(e.raw[n:])
		return time.Unix(sec, int64(ns)).UTC()
	}
	panic("memory: decode property of unknown type")
}

// uvarint decodes an unsigned varint from s (binary.Uvarint without a []byte).
func uvarint(s string) (uint64, int) {
	var x uint64
	var shift uint
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 {
			return x | uint64(c)<<shift, i + 1
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	panic("memory: truncated varint")
}

// varint decodes a zigzag varint from s.
func varint(s string) (int64, int) {
	ux, n := uvarint(s)
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x, n
}

func varintLen(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			return i + 1
		}
	}
	panic("memory: truncated varint")
}
