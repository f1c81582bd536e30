package a2aserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/funcgraph/funcgraph/pkg/engine"
	"github.com/funcgraph/funcgraph/pkg/funchost"
)

// AgentCard is the A2A v1.0 agent card of one durable graph.
type AgentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Version              string                    `json:"version"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []map[string][]string     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
}

// AgentInterface is a URL the agent answers at, and its binding.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentCapabilities says what the agent supports beyond the core methods.
type AgentCapabilities struct {
	Streaming         bool `json:"streaming"`
	PushNotifications bool `json:"pushNotifications"`
	ExtendedAgentCard bool `json:"extendedAgentCard"`
}

// SecurityScheme is an API key scheme: the function key.
type SecurityScheme struct {
	APIKeySecurityScheme *APIKeySecurityScheme `json:"apiKeySecurityScheme,omitempty"`
}

// APIKeySecurityScheme names where the key goes.
type APIKeySecurityScheme struct {
	Description string `json:"description,omitempty"`
	Location    string `json:"location"`
	Name        string `json:"name"`
}

// AgentSkill is what the agent does: its graph.
type AgentSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// Card returns the agent card of graph name, its URL under base (scheme and host, e.g.
// "https://app.azurewebsites.net"), and false for a name that is no public durable graph
// and no hosted graph served (Options.Hosted).
func (s *Server) Card(base, name string) (AgentCard, bool) {
	if s.opts.Registry.Internal(name) {
		return AgentCard{}, false
	}
	g, err := s.opts.Registry.Latest(name)
	if err != nil {
		a, ok := s.hosted(name)
		if !ok {
			return AgentCard{}, false
		}
		desc := "Hosted graph " + name + ": a message runs it within the request and is answered by a message with its output; it keeps no tasks."
		if a.checkpointed {
			desc += " The conversation of a contextId is one thread."
		}
		if a.description != "" {
			desc = a.description + ". " + desc
		}
		return s.card(base, name, desc, true, AgentSkill{ID: name, Name: name,
			Description: "Runs the hosted graph " + name + " on the message's input", Tags: []string{"hosted", "funcgraph"}}), true
	}
	m := g.Manifest()
	return s.card(base, name,
		"Durable graph "+m.GraphName+" (version "+m.Version+"): each task is a durable run; a run waiting for an event is input-required.",
		s.streams(), AgentSkill{ID: m.GraphName, Name: m.GraphName, Description: "Runs the durable graph " + m.GraphName + " from the message's input",
			Tags: []string{"durable", "funcgraph"}}), true
}

// card is the agent card of one agent.
func (s *Server) card(base, name, description string, streaming bool, skill AgentSkill) AgentCard {
	path := "/a2a/" + url.PathEscape(name)
	if p := strings.Trim(s.opts.RoutePrefix, "/"); p != "" {
		path = "/" + p + path
	}
	in := []string{"application/json"}
	if s.opts.TextFields[name] != "" {
		in = append(in, "text/plain")
	}
	card := AgentCard{
		Name:                name,
		Description:         description,
		SupportedInterfaces: []AgentInterface{{URL: base + path, ProtocolBinding: "JSONRPC", ProtocolVersion: ProtocolVersion}},
		Version:             s.opts.Version,
		Capabilities:        AgentCapabilities{Streaming: streaming},
		DefaultInputModes:   in,
		DefaultOutputModes:  []string{"application/json"},
		Skills:              []AgentSkill{skill},
	}
	if s.opts.AuthLevel != funchost.AuthAnonymous {
		card.SecuritySchemes = map[string]SecurityScheme{"functionKey": {APIKeySecurityScheme: &APIKeySecurityScheme{
			Description: "An Azure Functions function or host key", Location: "header", Name: "x-functions-key"}}}
		card.SecurityRequirements = []map[string][]string{{"functionKey": {}}}
	}
	return card
}

// serveCard serves GET /api/a2a/{graph_name}/.well-known/agent-card.json.
func (s *Server) serveCard(w http.ResponseWriter, r *http.Request) {
	card, ok := s.Card(requestBase(r), r.PathValue("graph_name"))
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"agent not found"}`))
		return
	}
	b, _ := json.Marshal(card)
	_, _ = w.Write(b)
}

// requestBase returns the scheme and host the caller used: X-Forwarded-Proto (the Azure
// front end's) when http or https, else the URL's scheme, else TLS; the Host header.
func requestBase(r *http.Request) string {
	scheme := "http"
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	switch proto = strings.ToLower(strings.TrimSpace(proto)); {
	case proto == "http" || proto == "https":
		scheme = proto
	case r.URL.Scheme == "http" || r.URL.Scheme == "https":
		scheme = r.URL.Scheme
	case r.TLS != nil:
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	return scheme + "://" + host
}

// streams reports whether the Runs serves feeds, which streams and blocking sends read.
func (s *Server) streams() bool {
	_, ok := s.opts.Runs.(engine.RunFeeder)
	return ok
}
