package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/funcgraph/funcgraph/pkg/durable"
)

// Search keys find runs by what they are about (a ticket, a customer) without scanning the
// runs: a run started with search keys (the graph's declared ones, durable.GraphManifest's
// SearchKeys, taken from the start's input, and StartRunRequest.SearchKeys) has one index
// row per key, besides its rows in the sharded families (index.go):
//
//	PartitionKey  "~key~<h>"   every run with that key value
//	              h = the first 16 bytes of SHA-256(name + "\x00" + value), in lowercase hex
//	RowKey        <19-digit (MaxInt64 - created, 100 ns precision)>_<run id>  (newest first)
//
// with the properties of the other index rows, and SearchKeys: the run's keys as a JSON
// object, names sorted, which every index row of the run and its head carry, so that a
// listing, the repair pass and a purge know every row of the run from any one of them. A key
// is hashed because a value may hold characters no key may; a listing checks the keys of the
// head it reads, so two values whose hashes met would still list only their own runs.
//
// So a listing by key (RunQuery.Keys) is one query of that key's partition per page plus a
// head read per run it returns, whatever the number of other runs. Further keys, a status,
// a graph name or hash, an owner or a group are conditions within that partition: the cost
// follows the runs with the key's value, never the others. The partitions are not sharded: a
// key value names one ticket or customer, whose runs start at a person's pace.
//
// Cost: one insert more per key when a run starts, one merge more per key when it finishes,
// one delete more per key when it is purged or replaced; nothing for a run without keys. The
// rows follow the rules of the other index rows: written, idempotently, before the head (a
// stored run is always found by its keys), their status after the finishing commit, and the
// rows of a start that never stored its head removed by the repair pass or a listing once the
// start is fenced (fence.go). Key rows are never in an active partition: an unfinished filter
// is a condition on their status.
const searchKeyPrefix = "~key~"

// Limits of search keys, checked before anything is stored.
const (
	// MaxSearchKeys bounds the search keys of one run, declared and given together.
	MaxSearchKeys = durable.MaxSearchKeys
	// MaxSearchKeyNameLength bounds a key's name, in bytes.
	MaxSearchKeyNameLength = durable.MaxSearchKeyNameLength
	// MaxSearchKeyValueBytes bounds a key's value, in bytes of UTF-8.
	MaxSearchKeyValueBytes = 256
)

// ErrInvalidSearchKey is wrapped by a *SearchKeyError.
var ErrInvalidSearchKey = errors.New("engine: invalid search key")

// SearchKeyError reports a search key a start cannot index: a bad name or value, or too many
// keys. It wraps ErrInvalidSearchKey; nothing is stored.
type SearchKeyError struct {
	// Name is the key at fault ("" when the count is).
	Name string
	// Reason says what is wrong, in words fit for the caller.
	Reason string
}

// Error names the key and the reason.
func (e *SearchKeyError) Error() string {
	if e.Name == "" {
		return "engine: invalid search keys: " + e.Reason
	}
	return fmt.Sprintf("engine: invalid search key '%s': %s", e.Name, e.Reason)
}

// Unwrap returns ErrInvalidSearchKey.
func (e *SearchKeyError) Unwrap() error { return ErrInvalidSearchKey }

// Reasons of a SearchKeyError.
var (
	searchKeyNameWant  = fmt.Sprintf("want a name of 1 to %d letters, digits, '_', '-' or '.'", MaxSearchKeyNameLength)
	searchKeyValueWant = fmt.Sprintf("want a value of 1 to %d bytes of UTF-8 without control characters", MaxSearchKeyValueBytes)
	searchKeyCountWant = fmt.Sprintf("want at most %d keys, declared and given together", MaxSearchKeys)
)

// ValidSearchKeyName reports whether name can name a search key: 1–MaxSearchKeyNameLength
// ASCII letters, digits, '_', '-' or '.' (a name travels in a query parameter, key.<name>).
func ValidSearchKeyName(name string) bool {
	if name == "" || len(name) > MaxSearchKeyNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// ValidSearchKeyValue reports whether value can be a search key's value: 1–
// MaxSearchKeyValueBytes bytes of valid UTF-8 without control characters (U+0000–U+001F,
// U+007F–U+009F).
func ValidSearchKeyValue(value string) bool {
	if value == "" || len(value) > MaxSearchKeyValueBytes || !utf8.ValidString(value) {
		return false
	}
	for _, r := range value {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return false
		}
	}
	return true
}

// CheckSearchKeys returns a *SearchKeyError for keys a start or a listing cannot use: more
// than MaxSearchKeys, a name outside ValidSearchKeyName or a value outside
// ValidSearchKeyValue (the first bad name in name order).
func CheckSearchKeys(keys map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		switch {
		case !ValidSearchKeyName(name):
			return &SearchKeyError{Name: name, Reason: searchKeyNameWant}
		case !ValidSearchKeyValue(keys[name]):
			return &SearchKeyError{Name: name, Reason: searchKeyValueWant}
		}
	}
	if len(keys) > MaxSearchKeys {
		return &SearchKeyError{Reason: searchKeyCountWant}
	}
	return nil
}

// runSearchKeys returns the search keys of a start: the declared names whose top-level
// member of input (a JSON object) is a non-empty string or a number (its JSON text, as
// written), then given, whose values replace the input's for the same name. A declared name
// absent from the input, or whose value is null, "" or of another type, is not indexed.
// Errors: a *SearchKeyError for a key CheckSearchKeys refuses.
func runSearchKeys(declared []string, input json.RawMessage, given map[string]string) (map[string]string, error) {
	keys := map[string]string{}
	if len(declared) > 0 {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(input, &members); err != nil {
			return nil, fmt.Errorf("read search keys of the input: %w", err)
		}
		for _, name := range declared {
			if v, ok := searchKeyOfMember(members[name]); ok {
				keys[name] = v
			}
		}
	}
	maps.Copy(keys, given)
	if err := CheckSearchKeys(keys); err != nil {
		return nil, err
	}
	return keys, nil
}

// searchKeyOfMember returns the value a search key takes from a member of the input: a
// string's text, a number's JSON text; ok is false for any other value, "" included.
func searchKeyOfMember(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil || s == "" {
			return "", false
		}
		return s, true
	case c == '-' || c >= '0' && c <= '9':
		return string(raw), true
	}
	return "", false
}

// searchKeysJSON returns keys as the SearchKeys property stores them: a JSON object, names
// sorted; "" for none.
func searchKeysJSON(keys map[string]string) string {
	if len(keys) == 0 {
		return ""
	}
	b, _ := json.Marshal(keys) // a map of strings always encodes, its keys sorted
	return string(b)
}

// decodeSearchKeys returns the keys of a SearchKeys property; nil for "" or a value that is
// not one searchKeysJSON writes.
func decodeSearchKeys(s string) map[string]string {
	if s == "" {
		return nil
	}
	var keys map[string]string
	if json.Unmarshal([]byte(s), &keys) != nil {
		return nil
	}
	return keys
}

// searchKeyPartition returns the index partition of one key value.
func searchKeyPartition(name, value string) string {
	sum := sha256.Sum256([]byte(name + "\x00" + value))
	return searchKeyPrefix + hex.EncodeToString(sum[:16])
}

// searchKeyRows returns the index rows of a run's keys (a SearchKeys property), in name order.
func searchKeyRows(keys, rowKey string) []indexRow {
	m := decodeSearchKeys(keys)
	rows := make([]indexRow, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		rows = append(rows, indexRow{searchKeyPartition(name, m[name]), rowKey})
	}
	return rows
}

// hasSearchKeys reports whether a run's keys (a SearchKeys property) hold every key of want.
func hasSearchKeys(keys string, want map[string]string) bool {
	if len(want) == 0 {
		return true
	}
	m := decodeSearchKeys(keys)
	for name, v := range want {
		if got, ok := m[name]; !ok || got != v {
			return false
		}
	}
	return true
}

// searchKeyCursor returns the one cursor of a listing by q.Keys: the partition of its first
// key in name order, newest first, with the query's other filters as conditions on the
// rows. The other keys are checked on the heads the listing reads (listedRun).
func searchKeyCursor(q RunQuery, limit int) *listCursor {
	first := slices.Min(slices.Collect(maps.Keys(q.Keys)))
	c := &listCursor{q: Query{PartitionKey: searchKeyPartition(first, q.Keys[first]), Limit: singleFetch(limit)}}
	c.q.RowKeyFrom, c.q.RowKeyTo = createdRange(q)
	switch {
	case q.unfinished():
		c.q.Where = append(c.q.Where, Cond{Property: iStatus, Op: CondEq, Value: indexActive})
	case q.Status != "":
		c.q.Where = append(c.q.Where, finishedStatusConds(q.Status)...)
	}
	for _, f := range []struct{ prop, value string }{{iGraph, q.GraphName}, {iHash, q.GraphHash}, {iOwner, q.Owner}, {iGroup, q.Group}} {
		if f.value != "" {
			c.q.Where = append(c.q.Where, Cond{Property: f.prop, Op: CondEq, Value: f.value})
		}
	}
	return c
}
