// Package isolation scopes threads and runs to the identity that created them (per-user
// isolation, as LangGraph Platform's auth handlers do with an "owner" metadata key).
//
// One Isolation resolves who made a request (Caller): under the Functions host, the
// identity App Service Authentication puts in X-MS-CLIENT-PRINCIPAL-ID (qualified by
// X-MS-CLIENT-PRINCIPAL-IDP); on the standalone server, the header Config.IdentityHeader
// names, trusted only from the peers in Config.TrustedProxies. The master key makes a caller
// an admin, who sees and acts on every object. The HTTP surfaces (package platform for
// threads and their runs, package host for the hosting routes' thread ids, package runsapi
// for durable runs) record Caller.ID under the metadata key OwnerKey on what a caller
// creates and answer 404 for another identity's objects. Identities are compared exactly as
// sent; one with control characters or whitespace other than the space is refused
// (ValidIdentity), never trimmed into another.
//
// It is not authentication: it trusts the front end that authenticated the caller, and it
// reads nothing but request headers, the peer address and the key level package funchost
// recorded. A nil *Isolation is isolation off, and costs the surfaces one nil check.
package isolation
