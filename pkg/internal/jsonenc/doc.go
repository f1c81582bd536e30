// Package jsonenc encodes values as encoding/json does, without HTML escaping and without
// the newline json.Encoder adds (Append), through encoders kept in a pool between calls: one
// encoder and buffer per call instead of json.Marshal's allocations, and `<`, `>` and `&`
// written as they are. It also reads a string's text out of the raw JSON a jsontext decoder
// validated (Unquote and its kin), the one way the request paths and durable states do it.
//
// It is not a parser: Unquote and its kin trust that their input is a valid JSON string. Nor
// does it write Python-style JSON (package pyjson).
package jsonenc
