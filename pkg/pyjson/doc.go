// Package pyjson writes JSON in the style of Python's json.dumps with its default arguments:
// separators ", " and ": ", every character outside printable ASCII escaped as a lowercase
// \uXXXX (UTF-16 surrogate pairs above U+FFFF, DEL as \u007f), and no HTML escaping of <, >
// and &. The durable HTTP API writes its bodies this way for byte-level parity (docs/lineage.md).
//
// Values are first encoded by encoding/json, so key order is encoding/json's (struct field
// order, sorted map keys) and json.RawMessage keeps its own order; numbers are written as
// encoding/json writes them. It is not a general Python emulation: floats are not rewritten in
// Python repr.
package pyjson
