package funchosttest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// configBool is a boolean host.json setting as the host's configuration binder reads it: the
// host sees every host.json value as a string, so a JSON true or false, or a string that .NET's
// bool.TryParse accepts ("true" or "false" in any case, white space around it), binds; null
// leaves the default (false); anything else (a number, "yes", an object) fails the host's
// startup ("Failed to convert configuration value ... to type 'System.Boolean'").
type configBool bool

// UnmarshalJSON implements json.Unmarshaler with the binder's rules.
func (b *configBool) UnmarshalJSON(data []byte) error {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		return nil
	case bool:
		*b = configBool(v)
		return nil
	case string:
		switch strings.ToLower(strings.Trim(v, " \t\r\n\x00")) {
		case "true":
			*b = true
			return nil
		case "false":
			*b = false
			return nil
		}
	}
	return fmt.Errorf("failed to convert configuration value %s to type 'System.Boolean'", data)
}
