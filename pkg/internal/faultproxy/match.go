package faultproxy

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Request is what a Matcher sees of one request. Its fields must not be modified.
type Request struct {
	Method string
	// Path is the URL path as sent (escaped), e.g. "/devstoreaccount1/runs(PartitionKey='a',RowKey='r')".
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Matcher reports whether a rule applies to a request.
type Matcher func(r *Request) bool

// Methods matches requests with one of the methods (case-insensitive).
func Methods(methods ...string) Matcher {
	return func(r *Request) bool {
		return slices.ContainsFunc(methods, func(m string) bool { return strings.EqualFold(m, r.Method) })
	}
}

// PathMatches matches requests whose escaped path matches the regular expression. It panics
// on a bad expression, like regexp.MustCompile.
func PathMatches(expr string) Matcher {
	re := regexp.MustCompile(expr)
	return func(r *Request) bool { return re.MatchString(r.Path) }
}

// BodyContains matches requests whose body contains s.
func BodyContains(s string) Matcher {
	b := []byte(s)
	return func(r *Request) bool { return bytes.Contains(r.Body, b) }
}

// All matches requests every matcher matches (and every request when none is given).
func All(ms ...Matcher) Matcher {
	return func(r *Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

// AnyOf matches requests one of the matchers matches.
func AnyOf(ms ...Matcher) Matcher {
	return func(r *Request) bool {
		for _, m := range ms {
			if m(r) {
				return true
			}
		}
		return false
	}
}

// Write matches every request that may change something: any method but GET, HEAD and
// OPTIONS.
func Write() Matcher {
	return func(r *Request) bool {
		return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodOptions
	}
}

// Kinds of request of the storage services, by URL shape (paths start with the account name,
// as on Azurite and Azure's path-style endpoints: "/<account>/<resource>…"). Each assumes the
// proxy fronts its service: a queue message's path has the shape of a blob's.

// TableBatch matches table entity group transactions: POST /<account>/$batch.
func TableBatch() Matcher {
	return All(Methods(http.MethodPost), PathMatches(`/\$batch$`))
}

// TableEntityWrite matches single-entity table writes: an insert (POST /<account>/<table>) or
// an update, merge or delete of an entity (PUT, MERGE, PATCH or DELETE of
// /<account>/<table>(PartitionKey='…',RowKey='…')).
func TableEntityWrite() Matcher {
	insert := All(Methods(http.MethodPost), PathMatches(`^/[^/]+/[^/$()]+$`))
	update := All(Methods(http.MethodPut, "MERGE", http.MethodPatch, http.MethodDelete), PathMatches(`\(.*\)$`))
	return AnyOf(insert, update)
}

// QueueEnqueue matches Put Message: POST /<account>/<queue>/messages.
func QueueEnqueue() Matcher {
	return All(Methods(http.MethodPost), PathMatches(`^/[^/]+/[^/]+/messages$`))
}

// QueueDelete matches Delete Message: DELETE /<account>/<queue>/messages/<id>.
func QueueDelete() Matcher {
	return All(Methods(http.MethodDelete), PathMatches(`^/[^/]+/[^/]+/messages/[^/]+$`))
}

// QueueUpdate matches Update Message (a visibility extension): PUT
// /<account>/<queue>/messages/<id>.
func QueueUpdate() Matcher {
	return All(Methods(http.MethodPut), PathMatches(`^/[^/]+/[^/]+/messages/[^/]+$`))
}

// QueueReceive matches Get Messages: GET /<account>/<queue>/messages.
func QueueReceive() Matcher {
	return All(Methods(http.MethodGet), PathMatches(`^/[^/]+/[^/]+/messages$`))
}

// BlobPut matches blob writes: PUT /<account>/<container>/<blob…> (a whole upload, a block or
// a block list), not an operation on the container itself.
func BlobPut() Matcher {
	return All(Methods(http.MethodPut), PathMatches(`^/[^/]+/[^/]+/.+`), notContainer)
}

// BlobDelete matches blob deletions: DELETE /<account>/<container>/<blob…>.
func BlobDelete() Matcher {
	return All(Methods(http.MethodDelete), PathMatches(`^/[^/]+/[^/]+/.+`), notContainer)
}

// BlobLease matches Lease Blob requests: PUT /<account>/<container>/<blob…>?comp=lease whose
// x-ms-lease-action header is one of actions (acquire, renew, change, release, break; any
// case), or any lease action when none is given. Container leases are not matched.
func BlobLease(actions ...string) Matcher {
	return All(Methods(http.MethodPut), PathMatches(`^/[^/]+/[^/]+/.+`), notContainer, func(r *Request) bool {
		if r.Query.Get("comp") != "lease" {
			return false
		}
		action := r.Header.Get("x-ms-lease-action")
		return len(actions) == 0 && action != "" ||
			slices.ContainsFunc(actions, func(a string) bool { return strings.EqualFold(a, action) })
	})
}

func notContainer(r *Request) bool { return r.Query.Get("restype") != "container" }
