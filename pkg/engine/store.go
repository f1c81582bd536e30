package engine

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store is the run/history store of the engine: one table of entities, shaped after Azure
// Table storage so that the Azure backend is a thin mapping. A run lives in one partition
// (its instance id); its head row and history rows are written together by Submit.
//
// Every implementation enforces the Azure Table rules checked by ValidateEntity and
// ValidateBatch (key characters and sizes, 252 custom properties, 64 KiB per property value,
// 1 MiB per entity, 100 operations and 4 MiB per batch, one partition, each row once), so a
// write that is green in memory is also legal in Azure.
//
// Implementations must be safe for concurrent use.
type Store interface {
	// Get reads one entity. Errors: ErrNotFound when no entity has that key; ErrInvalidEntity
	// for a key that breaks the key rules.
	Get(ctx context.Context, partitionKey, rowKey string) (Entity, error)

	// Submit applies ops atomically (all or nothing) as one entity group transaction and
	// returns the new ETag of each operation's entity, in op order ("" for deletes). A backend
	// that cannot learn the ETags of a transaction returns "" for them; the engine then
	// re-reads what it needs. Errors, wrapped in a *BatchError naming the failing op where
	// one op is at fault:
	//   - ErrConflict: an Insert of an existing row, or an If-Match that does not match the
	//     stored ETag;
	//   - ErrNotFound: a Replace, Merge or Delete of a missing row;
	//   - ErrTooLarge (a *LimitError): a property value, entity or batch above the limits, or
	//     more than 100 ops;
	//   - ErrInvalidEntity: an empty batch, two partitions, a row twice, a bad key, property
	//     name or value type, or a missing If-Match on Replace, Merge or Delete;
	//   - ErrStorageFull: the batch would grow a store that holds all it may (only a store
	//     with a budget, such as the in-memory one with memory.WithBudget).
	//
	// Only ErrTooLarge, ErrInvalidEntity and ErrStorageFull say that nothing was written. Any other error
	// leaves the outcome unknown: a transport error, timeout or 5xx may come after the write
	// was applied, and a backend that retries such failures (the Azure SDK does) reports the
	// ErrConflict or ErrNotFound its retry met when the first try had landed — the writer
	// that "got there first" may be the caller itself. Callers that must know read back (the
	// ambiguity rule, commit.go); backends need not tell these cases apart.
	Submit(ctx context.Context, ops []Op) ([]string, error)

	// Query returns one page of entities matching q, ordered by partition key then row key.
	// A page holds at most q.Limit (≤ 1000) entities and may be empty while still carrying a
	// continuation token; resend the same query with the token to continue. Errors:
	// ErrInvalidQuery for a bad limit, condition or token.
	Query(ctx context.Context, q Query) (Page, error)
}

// PartitionKeyChecker is an optional capability of a Store: a backend that cannot write some
// partition keys Azure's rules allow (the Azure Table store cannot update a row whose key
// holds a single quote, see package tablestore) says so, and StartRun refuses such an
// instance id with ErrInvalidInstanceID instead of starting a run it could never step.
type PartitionKeyChecker interface {
	// CheckPartitionKey returns an error when the store cannot update rows under pk.
	CheckPartitionKey(pk string) error
}

// RowReader is an optional capability of a Store: GetRow reads one row as Get does, but
// hands its properties to visit one by one instead of building the map Get returns. The
// engine reads a run's head (34 properties) this way when the store offers it: no map to
// build and look up, on the path of every work item and every status read.
type RowReader interface {
	// GetRow reads the row pk/rk and calls visit with each of its properties, the values Get
	// would return in Entity.Properties; it returns the row's ETag and Timestamp. visit is
	// called before GetRow returns and must not call the store. Errors as Get's.
	GetRow(ctx context.Context, partitionKey, rowKey string, visit func(name string, value any)) (etag string, timestamp time.Time, err error)
}

// Entity is one table row. Property values are string, []byte, bool, int32, int64, float64
// or time.Time; nil and other types are rejected. Stores never retain or return the caller's
// map or byte slices.
type Entity struct {
	// PartitionKey and RowKey form the entity's key.
	PartitionKey, RowKey string
	// ETag is the entity's version, set by the store on reads (and returned by Submit).
	ETag string
	// Timestamp is set by the store on every write; it is ignored on writes.
	Timestamp time.Time
	// Properties are the custom properties (at most 252).
	Properties map[string]any
}

// OpKind is the kind of one batch operation.
type OpKind int

// Batch operation kinds, with Azure Table semantics.
const (
	// OpInsert adds a new row; ErrConflict if the row exists.
	OpInsert OpKind = iota + 1
	// OpReplace replaces all properties of an existing row; needs IfMatch.
	OpReplace
	// OpMerge updates the given properties of an existing row, keeping the others; needs
	// IfMatch.
	OpMerge
	// OpDelete removes an existing row; needs IfMatch. Only the key of Entity is used.
	OpDelete
)

// String returns the kind's name: insert, replace, merge or delete.
func (k OpKind) String() string {
	switch k {
	case OpInsert:
		return "insert"
	case OpReplace:
		return "replace"
	case OpMerge:
		return "merge"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// ETagAny as IfMatch only requires the row to exist.
const ETagAny = "*"

// Op is one operation of a batch.
type Op struct {
	// Kind is what the op does.
	Kind OpKind
	// Entity is the row it writes (only its key, for a delete).
	Entity Entity
	// IfMatch is the ETag the stored row must have (ETagAny: any). Required for Replace,
	// Merge and Delete; ignored for Insert.
	IfMatch string
}

// CondOp compares a property with a value in a query condition.
type CondOp string

// Condition operators. As in Azure, a condition on a property the entity lacks, or of a
// different type than the value, is false.
const (
	CondEq CondOp = "eq"
	CondNe CondOp = "ne"
	CondLt CondOp = "lt"
	CondLe CondOp = "le"
	CondGt CondOp = "gt"
	CondGe CondOp = "ge"
)

// Cond is one query condition: Property Op Value. Property may be "PartitionKey" or
// "RowKey". Value has one of the entity value types; int64 and int32 compare as numbers.
type Cond struct {
	// Property is the property compared.
	Property string
	// Op is the comparison.
	Op CondOp
	// Value is what the property is compared with.
	Value any
}

// Query selects entities. All conditions must hold (AND).
type Query struct {
	// PartitionKey restricts the query to one partition; "" queries all partitions.
	PartitionKey string
	// RowKeyFrom (inclusive) and RowKeyTo (exclusive) bound the row key; "" is unbounded.
	RowKeyFrom, RowKeyTo string
	// Where lists further conditions.
	Where []Cond
	// Limit is the page size, 1–1000; 0 means 1000.
	Limit int
	// Continuation continues a previous page (opaque).
	Continuation string
}

// Page is one page of query results.
type Page struct {
	// Entities are the page's entities, in key order.
	Entities []Entity
	// Continuation is "" on the last page.
	Continuation string
}

// Storage errors. Backends wrap them; test with errors.Is.
var (
	// ErrNotFound reports a missing entity, payload or queue message (after a retried
	// delete, possibly one the caller's own first try deleted).
	ErrNotFound = errors.New("engine: not found")
	// ErrConflict reports an insert of an existing key or an If-Match that failed: another
	// writer got there first — or, after a retried request, the caller's own first try (see
	// Store.Submit).
	ErrConflict = errors.New("engine: conflict")
	// ErrTooLarge reports a value, entity, batch, payload or message above its limit.
	ErrTooLarge = errors.New("engine: too large")
	// ErrInvalidEntity reports a write the table service would reject for reasons other than
	// size (keys, property names and types, batch shape).
	ErrInvalidEntity = errors.New("engine: invalid entity")
	// ErrInvalidQuery reports a query with a bad limit, condition or continuation token.
	ErrInvalidQuery = errors.New("engine: invalid query")
	// ErrStorageFull reports a write refused because the store holds all it may: the
	// in-memory stores' byte budget (memory.WithBudget). Nothing was written; a write that
	// shrinks the store is never refused.
	ErrStorageFull = errors.New("engine: storage full")
)

// LimitError reports which limit a write exceeded. It wraps ErrTooLarge.
type LimitError struct {
	// Limit names the limit, e.g. "property value", "entity", "batch", "batch operations".
	Limit string
	// Key identifies the entity ("<pk>/<rk>") when the limit is per entity.
	Key string
	// Property is set for "property value" limits.
	Property string
	// Size and Max are in the limit's unit (bytes, or operations).
	Size, Max int
}

// Error names the limit, the size against its maximum, and the property and entity when known.
func (e *LimitError) Error() string {
	msg := fmt.Sprintf("engine: %s too large: %d > %d", e.Limit, e.Size, e.Max)
	if e.Property != "" {
		msg += " (property " + e.Property + ")"
	}
	if e.Key != "" {
		msg += " (entity " + e.Key + ")"
	}
	return msg
}

// Unwrap returns ErrTooLarge.
func (e *LimitError) Unwrap() error { return ErrTooLarge }

// BatchError names the operation of a batch that made it fail.
type BatchError struct {
	// Index is the position of the failing op.
	Index int
	// Err is the op's error.
	Err error
}

// Error names the op and its error.
func (e *BatchError) Error() string { return fmt.Sprintf("batch op %d: %v", e.Index, e.Err) }

// Unwrap returns the op's error.
func (e *BatchError) Unwrap() error { return e.Err }

// RunAccounts is an optional capability of a Store that accounts the bytes each run holds to
// an owner (the in-memory store with a byte budget, memory.WithBudget). Retention then
// applies per owner: each owner keeps its own newest Retention.MaxRuns finished runs, and
// an owner that is Crowded loses its own oldest finished runs, never another owner's.
type RunAccounts interface {
	// AccountsRuns reports whether the store accounts runs at all (false: the other methods
	// answer nothing, and retention counts every run as one owner's).
	AccountsRuns() bool
	// RunOwner returns the owner run runID's rows count against ("" for none).
	RunOwner(runID string) string
	// Crowded reports whether owner's runs hold so much that its oldest finished runs should
	// go, to leave room for its new work.
	Crowded(owner string) bool
}

// What a store that accounts runs (RunAccounts) learns of a write from its context, besides
// its rows: whom a run the engine starts on its own is for, and whether a write makes room.
type (
	billedKey struct{}
	exemptKey struct{}
)

// BilledTo returns ctx marked as new work on behalf of owner ("" : no identity): the start of
// a child run, which the dispatcher makes for its family's root, billed to the root's owner
// (the owner its metadata carries) as that owner's own start would be. A store with a budget
// accounts the run to owner and refuses it as new work, within the room new work may take.
func BilledTo(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, billedKey{}, owner)
}

// BilledOwner returns the owner BilledTo put in ctx, and whether it did.
func BilledOwner(ctx context.Context) (string, bool) {
	o, ok := ctx.Value(billedKey{}).(string)
	return o, ok
}

// MakingRoom returns ctx marked as the writes of a cancel or a purge: a store with a budget
// accounts them but never refuses them with ErrStorageFull, so that a full store can always be
// freed. The engine marks a cancel's writes only once the budget refused them, with the
// reason cut short (cancelOne).
func MakingRoom(ctx context.Context) context.Context {
	return context.WithValue(ctx, exemptKey{}, true)
}

// IsMakingRoom reports whether ctx is marked by MakingRoom.
func IsMakingRoom(ctx context.Context) bool {
	v, _ := ctx.Value(exemptKey{}).(bool)
	return v
}
