// Package assistantmodel picks the example app's assistant model from the app settings: the
// built-in model, or OpenAI, Azure OpenAI or Anthropic through their adapters. It is its own
// package so that only the binary that wants the vendors (handler/) imports their SDKs: the
// example app itself, which other packages' tests import, does not.
package assistantmodel

import (
	"fmt"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/examples"
	"github.com/funcgraph/funcgraph/pkg/model"
)

// The settings of the assistant's model (docs/configuration.md, "Models").
const (
	envModel = "FUNCGRAPH_MODEL"

	envOpenAIKey     = "OPENAI_API_KEY"
	envOpenAIModel   = "OPENAI_MODEL"
	envOpenAIBaseURL = "OPENAI_BASE_URL"

	envAzureEndpoint   = "AZURE_OPENAI_ENDPOINT"
	envAzureDeployment = "AZURE_OPENAI_DEPLOYMENT"
	envAzureKey        = "AZURE_OPENAI_API_KEY"
	envAzureAPIVersion = "AZURE_OPENAI_API_VERSION"

	envAnthropicKey     = "ANTHROPIC_API_KEY"
	envAnthropicModel   = "ANTHROPIC_MODEL"
	envAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// The vendors FUNCGRAPH_MODEL names.
const (
	VendorBuiltin     = "builtin"
	VendorOpenAI      = "openai"
	VendorAzureOpenAI = "azure-openai"
	VendorAnthropic   = "anthropic"
)

// DefaultOpenAIModel is the OpenAI model when OPENAI_MODEL is unset.
const DefaultOpenAIModel = "gpt-4o-mini"

// FromEnv returns the assistant's model from the app settings getenv reads, and the
// vendor it is on: FUNCGRAPH_MODEL when set, else the first vendor whose settings are present
// (Azure OpenAI, OpenAI, Anthropic), else the built-in model. Errors name the setting that is
// missing or wrong; they never carry a key.
func FromEnv(getenv func(string) string) (model.Model, string, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	vendor := get(envModel)
	if vendor == "" {
		switch {
		case get(envAzureEndpoint) != "":
			vendor = VendorAzureOpenAI
		case get(envOpenAIKey) != "":
			vendor = VendorOpenAI
		case get(envAnthropicKey) != "":
			vendor = VendorAnthropic
		default:
			vendor = VendorBuiltin
		}
	}
	require := func(names ...string) error {
		for _, n := range names {
			if get(n) == "" {
				return fmt.Errorf("%s=%s needs %s", envModel, vendor, n)
			}
		}
		return nil
	}
	switch vendor {
	case VendorBuiltin:
		return examples.BuiltinModel(), vendor, nil
	case VendorOpenAI:
		if err := require(envOpenAIKey); err != nil {
			return nil, "", err
		}
		m, err := newOpenAI(get(envOpenAIKey), get(envOpenAIBaseURL), orDefault(get(envOpenAIModel), DefaultOpenAIModel))
		return m, vendor, err
	case VendorAzureOpenAI:
		if err := require(envAzureEndpoint, envAzureDeployment); err != nil {
			return nil, "", err
		}
		m, err := newAzureOpenAI(get(envAzureEndpoint), get(envAzureDeployment), get(envAzureKey), get(envAzureAPIVersion))
		return m, vendor, err
	case VendorAnthropic:
		if err := require(envAnthropicKey); err != nil {
			return nil, "", err
		}
		m, err := newAnthropic(get(envAnthropicKey), get(envAnthropicBaseURL), get(envAnthropicModel))
		return m, vendor, err
	}
	return nil, "", fmt.Errorf("%s must be %s, %s, %s or %s, got %q", envModel, VendorBuiltin, VendorOpenAI, VendorAzureOpenAI, VendorAnthropic, vendor)
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}
