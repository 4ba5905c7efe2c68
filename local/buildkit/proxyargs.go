package buildkit

import "strings"

// proxyVars are the proxy variables knit sets for RUN steps, both
// spellings, since tools read one or the other (curl only the lower
// case http_proxy, Go and Python either).
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"}

// proxyArgs are the build arguments that point RUN steps at the proxy.
// They are BuildKit's predefined proxy ARGs: every RUN step gets them
// in its environment without an ARG line, and BuildKit keeps them out of
// the cache key and the image's history, so a change of the proxy's
// address rebuilds nothing and no image records it. None when proxy is
// "".
func proxyArgs(proxy string) []string {
	if proxy == "" {
		return nil
	}
	var out []string
	for _, v := range proxyVars {
		out = append(out, "--opt", "build-arg:"+v+"="+proxy)
	}
	return out
}

// isProxyArg reports whether a user's build argument names a proxy
// variable knit sets. knit's value wins: a step reaches nothing but the
// proxy, so any other value could only break the build. BuildKit reads
// these names in any case (Http_Proxy too), so they are matched so.
func isProxyArg(name string) bool {
	for _, v := range proxyVars {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	return false
}

// proxyURL is RUN steps' proxy, "" when they have none.
func (d *Daemon) proxyURL() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.egress == nil {
		return ""
	}
	return d.egress.url
}
