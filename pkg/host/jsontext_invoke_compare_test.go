//go:build jsontextcompare

package host_test

import (
	"testing"

	"github.com/funcgraph/funcgraph/pkg/host"
)

// BenchmarkInvokeEchoCustomHandlerJX is BenchmarkInvokeEchoCustomHandler with each request
// body parser (see jsontext_compare_test.go).
func BenchmarkInvokeEchoCustomHandlerJX(b *testing.B) {
	b.Run("handwritten", BenchmarkInvokeEchoCustomHandler)
	b.Run("jsontext", func(b *testing.B) {
		defer host.UseJSONTextParser()()
		BenchmarkInvokeEchoCustomHandler(b)
	})
}
