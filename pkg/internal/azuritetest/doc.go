// Package azuritetest gives integration tests the Azurite connection that `make test` starts
// (ConnectionString), and an Azurite of their own over HTTPS with OAuth (StartOAuth), for
// identity-based settings, which the shared plain-HTTP Azurite cannot serve.
//
// Integration tests carry the build tag `integration` and a name containing "Integration".
// They never skip: without FUNCGRAPH_TEST_STORAGE (or FUNCGRAPH_TEST_AZURITE_BIN) they fail, so
// a broken Azurite start can not pass as green.
package azuritetest
