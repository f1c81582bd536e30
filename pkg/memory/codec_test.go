package memory

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestCodec_RoundTripsEveryType(t *testing.T) {
	var c codec
	at := time.Date(2026, 11, 24, 14, 56, 33, 513148061, time.FixedZone("X", 3600))
	m := map[string]any{
		"S": "text", "Empty": "", "B": []byte{0, 1, 255}, "T": true, "F": false,
		"I32": int32(math.MinInt32), "I64": int64(math.MaxInt64), "Neg": int64(-300),
		"Fl": -1.5e300, "At": at, "Old": time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	data := c.encode("rk", m)
	if !strings.HasPrefix(data, "rk") {
		t.Fatalf("row %q does not start with its key", data)
	}
	got := c.toMap(data[2:])
	want := maps.Clone(m)
	want["At"] = at.UTC()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %v\nwant    %v", got, want)
	}
	for name, v := range want {
		if g, ok := c.get(data[2:], name); !ok || !reflect.DeepEqual(g, v) {
			t.Errorf("get %s = %v, %v; want %v", name, g, ok, v)
		}
	}
	if _, ok := c.get(data[2:], "Missing"); ok {
		t.Error("get found a missing property")
	}
}

func TestCodec_MergeAddsAndReplaces(t *testing.T) {
	var c codec
	enc := c.encode("", map[string]any{"A": "a", "C": int64(3), "E": "e"})
	enc = c.merge("", enc, map[string]any{"B": "b", "C": "three", "F": true})
	got := c.toMap(enc)
	want := map[string]any{"A": "a", "B": "b", "C": "three", "E": "e", "F": true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	if got := c.toMap(c.merge("", "", map[string]any{"Z": "z"})); !reflect.DeepEqual(got, map[string]any{"Z": "z"}) {
		t.Fatalf("merge into nothing = %v", got)
	}
}

func TestCodec_NamesPastTheTableGoInline(t *testing.T) {
	var c codec
	for i := range maxNames {
		c.names.id(fmt.Sprintf("N%d", i))
	}
	enc := c.encode("", map[string]any{"N7": "known", "Zeta": "new", "Alpha": int64(1)})
	enc = c.merge("", enc, map[string]any{"Beta": false, "Zeta": "newer"})
	want := map[string]any{"N7": "known", "Zeta": "newer", "Alpha": int64(1), "Beta": false}
	if got := c.toMap(enc); !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}
	if v, ok := c.get(enc, "Beta"); !ok || v != false {
		t.Fatalf("get inline name = %v, %v", v, ok)
	}
}

func TestCodec_FrequentStringsShareTheDictionary(t *testing.T) {
	var c codec
	var first, last string
	for i := range dictMinUses + 1 {
		enc := c.encode(fmt.Sprint(i), map[string]any{"Status": "waiting_for_event", "Id": fmt.Sprintf("run-%d", i)})
		if i == 0 {
			first = enc
		}
		last = enc
	}
	if len(last) >= len(first) || len(c.dict.list) != 1 || c.dict.list[0] != "waiting_for_event" {
		t.Fatalf("dictionary %q; row %d bytes, first %d", c.dict.list, len(last), len(first))
	}
	if got := c.toMap(last[2:]); got["Status"] != "waiting_for_event" || got["Id"] != "run-16" {
		t.Fatalf("decoded %v", got)
	}
	if got := c.toMap(first[1:]); got["Status"] != "waiting_for_event" {
		t.Fatalf("a row written before the value was frequent decodes %v", got)
	}
}

func TestCodec_EqualRowsShareOneString(t *testing.T) {
	var c codec
	props := map[string]any{"RunID": "r-1", "Gen": int64(1)}
	a, b := c.encode("k", props), c.encode("k", props)
	if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("two equal rows do not share their string")
	}
}

// sortFields orders fields as cmpField does, on each of its paths: ids below 256, larger
// ids, inline names.
func TestSortFields_EntryOrder(t *testing.T) {
	t.Parallel()
	for _, ids := range [][]uint32{
		{5, 1, 255, 64, 63, 2, 128},
		{300, 5, 70000, 1, 256},
		{7, 0, 3, 0},
	} {
		fs := make([]field, len(ids))
		for i, id := range ids {
			fs[i] = field{id: id, val: i}
			if id == 0 {
				fs[i].name = string(rune('z' - i))
			}
		}
		var scratch []field
		sortFields(fs, &scratch)
		if !slices.IsSortedFunc(fs, func(a, b field) int { return cmpField(a.id, a.name, b.id, b.name) }) {
			t.Errorf("%v: sorted %v", ids, fs)
		}
		for _, f := range fs {
			if ids[f.val.(int)] != f.id {
				t.Errorf("%v: field %v moved without its value", ids, f)
			}
		}
	}
}
