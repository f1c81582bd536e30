// Package apierror is the one error vocabulary of the module's HTTP surfaces: the hosting
// routes (package host), the platform routes (package platform) and the runs API (package
// runsapi).
//
//   - An *Error is a failure whose message a caller may see, of one kind (ErrBadRequest,
//     ErrNotFound, …). A surface that needs finer sentinels to branch on makes them with
//     NewKind, each a case of one kind.
//   - Status is the one function where an error becomes an HTTP status.
//   - A Shape writes an error's body in one surface's wire format: Hosting
//     ({"error":"error","detail":"<message>"}), Platform ({"detail": "<message>"}) and Runs
//     ({"error": "<message>"} and its extra members). An error that is not an *Error is
//     answered 500 with the shape's fixed text: internal error text never reaches a body.
//
// It is internal because no user builds with it: a graph refuses its input with
// host.ClientError or host.InputError, which the surfaces turn into an *Error. It is a leaf
// below host, platform and runsapi (and below funchost and isolation, whose errors are cases
// of its kinds). It is not part of the Functions protocol: the reply to the host is another
// layer (package funchost), and the status inside it, what the caller sees, is what this
// package decides.
package apierror
