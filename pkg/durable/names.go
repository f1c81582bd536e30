package durable

// Default handler names. A node handler given no name (WithHandlerName) is named
// "node:<node name>", a route handler given none (WithRouteName) "route:<node name>". The names
// depend on the node name only, never on the Go function: a graph hashes the same under
// `go test` (where package main is compiled under its import path) and in any binary, and
// renaming or moving a function is not a new version. Two nodes may share one function; each
// gets its own default name. An explicit name equal to another node's default name, bound to a
// different function, fails AddNode as any taken name does.
const (
	defaultHandlerPrefix = "node:"
	defaultRoutePrefix   = "route:"
)

func defaultHandlerName(node string) string { return defaultHandlerPrefix + node }
func defaultRouteName(node string) string   { return defaultRoutePrefix + node }
