// Package openapi is the OpenAPI 3.0 model the module's HTTP surfaces describe themselves
// with: a Document of paths and component schemas that marshals with its members in the
// order they were added, the Operation and Parameter objects of a path, and Schema, which
// SchemaOf generates from a Go type as encoding/json writes it.
//
// The hosting app (package host) builds its openapi.json from its routes with it, and the
// surfaces mounted on the app extend that document (package runsapi adds its schemas); the
// runs API's own openapi.json is a Document too. Schemas may also be written by hand as any
// JSON-encodable value; Object keeps a hand-written object's key order.
//
// It only describes: nothing here affects how a request is served. It is not a validator nor
// a client generator.
package openapi
