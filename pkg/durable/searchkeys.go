package durable

import (
	"fmt"
	"slices"
)

// Bounds of the search keys a graph declares (ManifestBuilder.SearchKeys); the engine applies
// the same to the keys a start adds.
const (
	// MaxSearchKeys bounds a graph's declared search keys.
	MaxSearchKeys = 8
	// MaxSearchKeyNameLength bounds a search key's name, in bytes.
	MaxSearchKeyNameLength = 64
)

// SearchKeys declares top-level fields of the state model (their JSON names) by which the
// graph's runs are found: when a run starts, each field whose value in the start's input is a
// non-empty string or a number is indexed under its name, so that a listing by that key value
// (engine.RunQuery.Keys, GET /api/runs?key.<name>=<value>) reads that value's runs only. A
// value of another type, or absent, is not indexed. Search keys do not enter the graph hash:
// declaring them makes no new version, and a graph that declares none keeps its hash.
//
// A name is 1–MaxSearchKeyNameLength ASCII letters, digits, '_', '-' or '.'; a graph declares
// at most MaxSearchKeys. Errors (wrapping ErrInvalidGraph, reported again by Build): "search
// key '<name>' is not a field of state model <M>", "invalid search key name '<name>': want 1
// to 64 letters, digits, '_', '-' or '.'", "duplicate search key '<name>'", "a graph declares
// at most 8 search keys".
func (b *ManifestBuilder[S]) SearchKeys(names ...string) error {
	schema, err := b.stateSchema()
	if err != nil {
		return b.fail(err.Error())
	}
	for _, name := range names {
		switch {
		case !validSearchKeyName(name):
			return b.fail(fmt.Sprintf("invalid search key name '%s': want 1 to %d letters, digits, '_', '-' or '.'", name, MaxSearchKeyNameLength))
		case slices.Contains(b.searchKeys, name):
			return b.fail(fmt.Sprintf("duplicate search key '%s'", name))
		}
		if _, ok := schema.byName[name]; !ok {
			return b.fail(fmt.Sprintf("search key '%s' is not a field of state model %s", name, schema.name))
		}
		if len(b.searchKeys) == MaxSearchKeys {
			return b.fail(fmt.Sprintf("a graph declares at most %d search keys", MaxSearchKeys))
		}
		b.searchKeys = append(b.searchKeys, name)
	}
	return nil
}

// validSearchKeyName reports whether name can name a search key (engine.ValidSearchKeyName).
func validSearchKeyName(name string) bool {
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
