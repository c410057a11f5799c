package nnrt

import "encoding/json"

// jsonText is a configuration as the C API reads it: JSON text, or nothing (NULL: the defaults).
type jsonText struct {
	text  string
	given bool
}

// toJSON turns a configuration value into JSON text: nil gives none (the defaults), a string,
// []byte or json.RawMessage is taken as JSON text as it is, and anything else (a map, or a struct
// with json tags such as ContextOptions) is marshalled with encoding/json.
func toJSON(v any) (jsonText, error) {
	switch t := v.(type) {
	case nil:
		return jsonText{}, nil
	case string:
		return jsonText{t, true}, nil
	case []byte:
		return jsonText{string(t), true}, nil
	case json.RawMessage:
		return jsonText{string(t), true}, nil
	}
	text, err := json.Marshal(v)
	if err != nil {
		return jsonText{}, bindingError(ErrInvalidArgument, "cannot encode the configuration as JSON: %v", err)
	}
	return jsonText{string(text), true}, nil
}
