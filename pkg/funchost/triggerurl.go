package funchost

import "net/url"

// parseTriggerURL is url.Parse for the trigger's Url, with a path for the URL the host sends
// on most requests: `http://` or `https://`, a host name (with a port or not), and a path of
// unreserved characters and slashes, with no query. Such a URL is read without url.Parse's
// checks and copies, into u; any other is left to url.Parse. FuzzParseTriggerURL checks the
// two agree.
func parseTriggerURL(raw string, u *url.URL) (*url.URL, error) {
	if plainURL(raw, u) {
		return u, nil
	}
	return url.Parse(raw)
}

// plainURL fills u and reports true when raw is such a plain URL.
func plainURL(raw string, u *url.URL) bool {
	var scheme string
	switch {
	case len(raw) > len("http://") && raw[:len("http://")] == "http://":
		scheme = "http"
	case len(raw) > len("https://") && raw[:len("https://")] == "https://":
		scheme = "https"
	default:
		return false
	}
	rest := raw[len(scheme)+len("://"):]
	slash, colon := -1, -1
	for i := 0; i < len(rest) && slash < 0; i++ {
		switch c := rest[i]; {
		case c == '/':
			slash = i
		case c == ':' && colon < 0 && i > 0:
			colon = i
		case c >= '0' && c <= '9':
		case colon < 0 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	if slash <= 0 || colon == slash-1 {
		return false // no path, no host, or a colon without a port
	}
	path := rest[slash:]
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '/' || c == '-' || c == '.' || c == '_' || c == '~':
		default:
			return false
		}
	}
	*u = url.URL{Scheme: scheme, Host: rest[:slash], Path: path}
	return true
}
