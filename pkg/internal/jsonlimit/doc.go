// Package jsonlimit checks the shape of a JSON value a route is about to accept: how deep its
// containers nest and how many member values and array items it holds. The platform routes
// and the runs API apply it to what they store (inputs, state updates, metadata, event
// payloads), so a value nested thousands of levels deep is refused at the door instead of
// stored for every reader (a Python client, a recursive decoder) to fail on later.
//
// It is not a JSON validator: a value that does not parse is reported (ErrInvalid), but
// callers check syntax first and answer that in their own words. Nor does it know an HTTP
// surface: each maps ErrTooDeep and ErrTooManyNodes to its own error body. The hosting routes
// apply the same rules during their one-pass parse (package host), where a second walk would
// cost.
package jsonlimit
