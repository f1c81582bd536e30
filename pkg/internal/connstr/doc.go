// Package connstr reads Azure Storage connection strings: their key=value form (Parse), and the
// expansion of "UseDevelopmentStorage=true" (optionally with DevelopmentStorageProxyUri) to the
// explicit account of the local storage emulator, Azurite (Expand). Package azure and the host
// emulator (package funchosttest) read connection strings through it, so both accept the same
// ones.
//
// It makes no clients and opens no connections: that is package azure's work.
package connstr
