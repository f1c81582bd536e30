package engine

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var updateHeadProps = flag.Bool("update", false, "rewrite testdata/head_props.golden")

// headCase is a head as a run holds it at one moment of its life.
type headCase struct {
	name string
	h    *head
}

// headCases returns representative heads: a fresh start and the heads of runs waiting,
// retrying, fanned out, parenting a child, being a child, held, parked and finished.
func headCases() []headCase {
	t0 := time.Date(2025, 3, 4, 5, 6, 7, 800, time.UTC)
	t1 := t0.Add(90 * time.Second)
	fresh := func() *head {
		return &head{
			runID: "run-1", gen: 1, nonce: "0a1b2c3d4e5f", writeID: "w-start", status: StatusPending,
			graph: "g", version: "1.0", hash: "h1", node: "a", stateJSON: `{"n":1}`,
			inputJSON: `{"graph_name":"g"}`, histSeq: 1, runnable: true, created: t0, updated: t0,
			indexShards: 4,
		}
	}
	step := func(f func(h *head)) *head {
		h := fresh()
		h.writeID, h.status, h.updated = "w-step", StatusRunning, t1
		h.step, h.visits, h.histSeq, h.inboxSeq, h.pending = 3, 3, 7, 2, 1
		h.node, h.stateJSON = "b", `{"n":2}`
		f(h)
		return h
	}
	return []headCase{
		{"fresh", fresh()},
		{"fresh grouped, owned, traced, spilled", func() *head {
			h := fresh()
			h.group, h.owner, h.trace, h.indexShards = "grp", "alice", "00-trace-01", 0
			h.stateJSON, h.stateRef, h.inputJSON, h.inputRef = "", "run-1/state", "", "run-1/input"
			h.custom = `{"c":true}`
			return h
		}()},
		{"stepped", step(func(*head) {})},
		{"waiting", step(func(h *head) {
			h.waiting, h.resume, h.waitDeadline = "approve", "c", t1.Add(time.Hour).UnixNano()
			h.waitTimeout, h.timeoutNode, h.runnable = int64(time.Hour), "late", false
		})},
		{"timed out", step(func(h *head) { h.timedOut, h.node = "approve", "late" })},
		{"retrying", step(func(h *head) {
			h.attempt, h.notBefore = 2, t1.Add(time.Second).UnixNano()
			h.failure = `{"node":"b","error":"boom"}`
		})},
		{"fanned out", step(func(h *head) { h.branchBase, h.branchCount, h.branchSpec = 8, 3, 7 })},
		{"child parent", step(func(h *head) {
			h.children, h.childDone, h.waiting = 2, "child~run-1~1.0a1b2c3d4e5f~2", "child~run-1~1.0a1b2c3d4e5f~3"
			h.family = 4
		})},
		{"child", func() *head {
			h := fresh()
			h.runID, h.parent, h.parentNonce = "child~run-1~1.0a1b2c3d4e5f~2", "run-1", "0a1b2c3d4e5f"
			h.depth, h.root, h.family = 2, "run-0", 3
			return h
		}()},
		{"child of a parent without a nonce", func() *head {
			h := fresh()
			h.runID, h.parent = "child~run-0~1.x~2", "run-0"
			return h
		}()},
		{"held", step(func(h *head) { h.holder, h.holdUntil, h.restarts = "start-9", t1.Add(time.Minute).UnixNano(), 1 })},
		{"parked", step(func(h *head) { h.awaitVersion, h.runnable = true, false })},
		{"finished", step(func(h *head) {
			h.status, h.runnable, h.pending = StatusCompleted, false, 0
			h.outputJSON, h.outputRef, h.custom = "", "run-1/output", `"done"`
		})},
	}
}

// formatProps writes props sorted by name, each with its Go type.
func formatProps(b *strings.Builder, title string, props map[string]any) {
	fmt.Fprintf(b, "  %s:\n", title)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if s, ok := props[k].(string); ok {
			fmt.Fprintf(b, "    %s string %q\n", k, s)
			continue
		}
		fmt.Fprintf(b, "    %s %T %v\n", k, props[k], props[k])
	}
}

// TestHead_Props_Golden pins the properties every write of the head carries, for each of
// headCases: a start's (allProps), a step's rewrite (mutableProps) and a step's merge from a
// fresh head and back to it (changedProps).
func TestHead_Props_Golden(t *testing.T) {
	t.Parallel()
	fresh := headCases()[0].h
	var b strings.Builder
	for _, c := range headCases() {
		fmt.Fprintf(&b, "== %s\n", c.name)
		formatProps(&b, "allProps", c.h.allProps())
		m := map[string]any{}
		c.h.mutableProps(m)
		formatProps(&b, "mutableProps", m)
		formatProps(&b, "changedProps(fresh)", c.h.changedProps(fresh))
		formatProps(&b, "fresh.changedProps", fresh.changedProps(c.h))
	}
	path := filepath.Join("testdata", "head_props.golden")
	if *updateHeadProps {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("head properties differ from %s (-update rewrites it):\n%s", path, got)
	}
}

// TestHead_Decode_RoundTrip: a head decodes from what a start and a step's merge from an
// empty head write, to the head it was, field for field; numbers stored as int32 read as
// int64.
func TestHead_Decode_RoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range headCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			props := c.h.allProps()
			maps.Copy(props, c.h.changedProps(&head{}))
			stamp := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			got, err := decodeHead(Entity{PartitionKey: c.h.runID, RowKey: headRowKey, ETag: "etag-1", Timestamp: stamp, Properties: props})
			if err != nil {
				t.Fatal(err)
			}
			want := c.h.clone()
			want.etag, want.stamp = "etag-1", stamp
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded\n%+v\nwant\n%+v", got, want)
			}
			for k, v := range props {
				if n, ok := v.(int64); ok && n == int64(int32(n)) {
					props[k] = int32(n)
				}
			}
			got32, err := decodeHead(Entity{PartitionKey: c.h.runID, ETag: "etag-1", Timestamp: stamp, Properties: props})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got32, want) {
				t.Errorf("decoded from int32s\n%+v\nwant\n%+v", got32, want)
			}
		})
	}
}

// TestHead_Set_IgnoresOtherTypes: a property of another type than its own, or an unknown
// one, leaves the field at its zero value.
func TestHead_Set_IgnoresOtherTypes(t *testing.T) {
	t.Parallel()
	for _, c := range headCases() {
		props := c.h.allProps()
		maps.Copy(props, c.h.changedProps(&head{}))
		h := &head{runID: c.h.runID}
		for k := range props {
			h.set(k, struct{}{})
		}
		h.set("Unknown", "x")
		if !reflect.DeepEqual(h, &head{runID: c.h.runID}) {
			t.Errorf("%s: set of other types gave %+v", c.name, h)
		}
	}
}

// TestHead_Absorb: absorb copies back the spilled pairs the write holds, and only those.
func TestHead_Absorb(t *testing.T) {
	t.Parallel()
	h := headCases()[0].h.clone()
	h.outputJSON = `{"o":1}`
	h.absorb(map[string]any{
		pState: "", pState + refSuffix: "run-1/state", pOutput + refSuffix: "run-1/output",
		pInput: `{"i":1}`, pNode: "other", pCustom: "x",
	})
	want := headCases()[0].h.clone()
	want.stateJSON, want.stateRef, want.outputJSON, want.outputRef, want.inputJSON = "", "run-1/state", `{"o":1}`, "run-1/output", `{"i":1}`
	if !reflect.DeepEqual(h, want) {
		t.Errorf("absorbed\n%+v\nwant\n%+v", h, want)
	}
}

// BenchmarkHead_ChangedProps measures a step's head merge.
func BenchmarkHead_ChangedProps(b *testing.B) {
	cs := headCases()
	base, h := cs[2].h, cs[5].h
	b.ReportAllocs()
	for b.Loop() {
		_ = h.changedProps(base)
	}
}

// BenchmarkHead_Decode measures reading a head from its properties.
func BenchmarkHead_Decode(b *testing.B) {
	props := headCases()[5].h.allProps()
	e := Entity{PartitionKey: "run-1", Properties: props}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeHead(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHead_AllProps measures a start's head properties.
func BenchmarkHead_AllProps(b *testing.B) {
	h := headCases()[1].h
	b.ReportAllocs()
	for b.Loop() {
		_ = h.allProps()
	}
}

// FuzzHead_Set: any property, of any of the stored types, sets a head that writes and reads
// back as itself.
func FuzzHead_Set(f *testing.F) {
	f.Add(uint8(0), "", "x", int64(1), true)
	f.Add(uint8(200), "State", "", int64(-1), false)
	f.Add(uint8(3), "Nothing", "Running", int64(1<<40), true)
	names := slices.Sorted(maps.Keys(propFields))
	f.Fuzz(func(t *testing.T, i uint8, name, s string, n int64, b bool) {
		if int(i) < len(names) {
			name = names[i]
		}
		h := &head{runID: "run-1", gen: 1, status: StatusRunning}
		for _, v := range []any{s, n, int32(n), b, time.Unix(0, n).UTC()} {
			h.set(name, v)
			props := h.allProps()
			maps.Copy(props, h.changedProps(&head{}))
			got := &head{runID: h.runID}
			for k, v := range props {
				got.set(k, v)
			}
			if got.awaitVersion != h.awaitVersion {
				t.Skip("allProps writes AwaitVersion false whatever the head holds")
			}
			if got.parentNonce != h.parentNonce && h.parent == "" {
				t.Skip("allProps writes ParentNonce with Parent only")
			}
			if !reflect.DeepEqual(got, h) {
				t.Fatalf("set %s = %#v: read back\n%+v\nwant\n%+v", name, v, got, h)
			}
		}
	})
}
