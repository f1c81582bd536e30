// Package version holds funcgraph's version: the one value that `<binary> --version` prints
// (package launch, which exports it as launch.Version) and GET /api/health/details reports as
// funcgraph_version (package host). It imports nothing, so any package may read it.
package version

// Version is funcgraph's version, semantic versioning without the leading "v".
const Version = "0.4.0"
