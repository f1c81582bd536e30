package assistantmodel_test

import (
	"strings"
	"testing"

	"github.com/funcgraph/funcgraph/pkg/exampleapp/assistantmodel"
)

func TestFromEnv_PicksTheVendorItsSettingsName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		env    map[string]string
		vendor string
		err    string
	}{
		{"nothing set", nil, assistantmodel.VendorBuiltin, ""},
		{"openai key", map[string]string{"OPENAI_API_KEY": "sk-secret"}, assistantmodel.VendorOpenAI, ""},
		{"azure key", map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_DEPLOYMENT": "d", "AZURE_OPENAI_API_KEY": "k-secret", "OPENAI_API_KEY": "sk-secret"}, assistantmodel.VendorAzureOpenAI, ""},
		{"anthropic key", map[string]string{"ANTHROPIC_API_KEY": "a-secret"}, assistantmodel.VendorAnthropic, ""},
		{"chosen over present keys", map[string]string{"FUNCGRAPH_MODEL": "builtin", "OPENAI_API_KEY": "sk-secret"}, assistantmodel.VendorBuiltin, ""},
		{"chosen without its key", map[string]string{"FUNCGRAPH_MODEL": "anthropic", "OPENAI_API_KEY": "sk-secret"}, "", "FUNCGRAPH_MODEL=anthropic needs ANTHROPIC_API_KEY"},
		{"azure without deployment", map[string]string{"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k-secret"}, "", "needs AZURE_OPENAI_DEPLOYMENT"},
		{"unknown vendor", map[string]string{"FUNCGRAPH_MODEL": "gemini"}, "", `FUNCGRAPH_MODEL must be builtin, openai, azure-openai or anthropic, got "gemini"`},
	} {
		m, vendor, err := assistantmodel.FromEnv(func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: the error carries a key: %v", tc.name, err)
			}
			continue
		}
		if err != nil || m == nil || vendor != tc.vendor {
			t.Errorf("%s: %v %q %v, want vendor %q", tc.name, m, vendor, err, tc.vendor)
		}
	}
}
